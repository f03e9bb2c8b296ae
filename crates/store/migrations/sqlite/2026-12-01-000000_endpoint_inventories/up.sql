-- Room inventory (docs/operations.md "Room inventory"): what each room system last said about
-- itself, read through its listener (`readinventory`). One row per endpoint that was tried;
-- a deleted room's row goes with it.
CREATE TABLE endpoint_inventories (
    endpoint_id TEXT PRIMARY KEY REFERENCES endpoints (id) ON DELETE CASCADE,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    -- The last attempt, whatever came of it; the refresh rounds pick the oldest.
    attempted_ms BIGINT NOT NULL,
    -- The last good read: when, and what (roomlink_domain::inventory::Inventory as JSON).
    read_ms BIGINT,
    inventory TEXT,
    -- Copied out of `inventory` for the fleet listing's filters.
    model TEXT,
    software_version TEXT,
    -- Why the last attempt failed (a catalog error's name and message); NULL after a read.
    failure_name TEXT,
    failure_message TEXT
);
-- The fleet listing pages through one enterprise's rows in endpoint id order.
CREATE INDEX endpoint_inventories_enterprise ON endpoint_inventories (enterprise_id, endpoint_id);
