-- The failed-authentication allowances (roomlink_domain::throttle): one row per key, holding the
-- key's theoretical arrival time and whether the last failure spent counted. A SQLite database
-- serves one instance, which keeps its allowances in memory; the table is here so that every
-- backend passes the same storage contract.
CREATE TABLE auth_failures (
    key TEXT PRIMARY KEY NOT NULL,
    tat_ms BIGINT NOT NULL,
    counted BOOLEAN NOT NULL
);
