-- The failed-authentication allowances that a cluster's instances share (roomlink_domain::throttle):
-- one row per key (a keyed hash of an address and what was guessed there), holding the key's
-- theoretical arrival time, and whether the last failure spent counted.
-- UNLOGGED: losing the allowances in a crash, or a failover to a replica, only refills them; it
-- spares a WAL record per failed authentication.
CREATE UNLOGGED TABLE auth_failures (
    key TEXT PRIMARY KEY,
    tat_ms BIGINT NOT NULL,
    counted BOOLEAN NOT NULL
);
