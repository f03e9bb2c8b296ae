ALTER TABLE endpoint_statuses DROP COLUMN join_ms;
ALTER TABLE endpoint_statuses DROP COLUMN join_source;
DROP TABLE call_sessions;
