-- Template assignments (issue #36 item 3): which template each room is assigned (one at most,
-- hence the endpoint as the key), and what the last drift check of the room found. A deleted
-- room or template takes its assignments with it.
CREATE TABLE template_assignments (
    endpoint_id TEXT PRIMARY KEY REFERENCES endpoints (id) ON DELETE CASCADE,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    template_id TEXT NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
    assigned_ms BIGINT NOT NULL,
    -- The last check (NULL until the first); copied out of `drift` for the check rounds.
    checked_ms BIGINT,
    -- The last check's record: the JSON text of roomlink_domain::template::drift::DriftRecord.
    -- Cleared when the room moves to another template (it was about the other one).
    drift TEXT
);
-- A template's rooms.
CREATE INDEX template_assignments_template ON template_assignments (enterprise_id, template_id);
