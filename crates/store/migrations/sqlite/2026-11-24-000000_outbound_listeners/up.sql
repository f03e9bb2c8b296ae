-- Outbound listeners connect to roomlink over their own WebSocket and have no base URL.
-- `connection` is 'inbound' or 'outbound'. base_url stays NOT NULL and holds '' for an
-- outbound listener: SQLite cannot drop a NOT NULL constraint without rebuilding the table,
-- and rebuilding listener_services means rebuilding endpoints, which reference it.
ALTER TABLE listener_services ADD COLUMN connection TEXT NOT NULL DEFAULT 'inbound';

-- The open connection of each outbound listener, for every instance to see: which instance
-- holds it since when, and that instance's last heartbeat (seen_ms).
CREATE TABLE listener_links (
    listener_id TEXT NOT NULL PRIMARY KEY REFERENCES listener_services (id) ON DELETE CASCADE,
    instance TEXT NOT NULL,
    since_ms BIGINT NOT NULL,
    version TEXT,
    seen_ms BIGINT NOT NULL
);
-- The heartbeat updates every row of one instance.
CREATE INDEX listener_links_instance ON listener_links (instance);
