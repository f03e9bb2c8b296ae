-- Auto-join claims (docs/calendars.md, "Auto-join"): one row per room and meeting occurrence,
-- taken by the instance that sends the join and settled with its outcome, so each occurrence
-- is joined once whatever the number of instances and restarts. An unsettled claim whose lease
-- has lapsed (its holder died) may be taken over. Purged a week after the meeting's start.
CREATE TABLE auto_joins (
    endpoint_id TEXT NOT NULL,
    event_uid TEXT NOT NULL,
    start_ms BIGINT NOT NULL,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    holder TEXT NOT NULL,
    lease_until_ms BIGINT NOT NULL,
    outcome TEXT CHECK (outcome IN ('JOINED', 'FAILED')),
    settled_at_ms BIGINT,
    PRIMARY KEY (endpoint_id, event_uid, start_ms)
);
CREATE INDEX auto_joins_by_start ON auto_joins (start_ms);
CREATE INDEX auto_joins_by_enterprise ON auto_joins (enterprise_id);
