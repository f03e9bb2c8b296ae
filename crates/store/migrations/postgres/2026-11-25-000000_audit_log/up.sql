-- The audit trail (docs/operations.md "Audit trail"): one row per audited action, written in
-- the action's own transaction where it has one. `seq` orders the trail and is the page cursor.
CREATE TABLE audit_log (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    at_ms BIGINT NOT NULL,
    actor_kind TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    actor_username TEXT,
    -- Role names, comma-separated.
    actor_roles TEXT NOT NULL,
    operation TEXT NOT NULL,
    target_id TEXT,
    outcome TEXT NOT NULL,
    detail TEXT
);
CREATE INDEX audit_log_enterprise ON audit_log (enterprise_id, seq);
CREATE INDEX audit_log_target ON audit_log (enterprise_id, target_id, seq);
-- Retention deletes by date.
CREATE INDEX audit_log_at ON audit_log (at_ms);
