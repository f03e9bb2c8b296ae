-- Each change of a room's health the health watch recorded (the room page's history): kept
-- for 30 days (housekeeping), newest first per room.
CREATE TABLE health_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    endpoint_id TEXT NOT NULL,
    state TEXT NOT NULL,
    previous_state TEXT,
    -- JSON: [{"code": ..., "message": ...}]
    reasons TEXT NOT NULL,
    changed_ms BIGINT NOT NULL
);
CREATE INDEX health_history_room ON health_history (enterprise_id, endpoint_id, changed_ms);
CREATE INDEX health_history_changed ON health_history (changed_ms);
