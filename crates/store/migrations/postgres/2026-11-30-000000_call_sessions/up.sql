-- Room usage (docs/operations.md "Room usage"): one row per call a room was seen in. A session
-- is open (ended_ms NULL) exactly while the room's last observed status has a call active; the
-- status writes open and close sessions in their own transactions. A deleted room's sessions
-- go with it.
CREATE TABLE call_sessions (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    endpoint_id TEXT NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    started_ms BIGINT NOT NULL,
    ended_ms BIGINT,
    -- api, autoJoin or device (roomlink_domain::usage::JoinSource).
    source TEXT NOT NULL
);
-- At most one open session per room, whoever writes.
CREATE UNIQUE INDEX call_sessions_open ON call_sessions (endpoint_id) WHERE ended_ms IS NULL;
-- A usage question reads the sessions of one enterprise that ended after the period began (or
-- go on): by this index, a recent period reads only recent sessions.
CREATE INDEX call_sessions_enterprise_ended ON call_sessions (enterprise_id, ended_ms);
-- Retention deletes by end.
CREATE INDEX call_sessions_ended ON call_sessions (ended_ms);
-- The room's last join by roomlink (its source and when it was asked), for the session the
-- call it asked for opens.
ALTER TABLE endpoint_statuses ADD COLUMN join_source TEXT;
ALTER TABLE endpoint_statuses ADD COLUMN join_ms BIGINT;
