-- Changes in the same transaction as every write to the enterprise's endpoints, so that one
-- primary-key read tells whether a cached list is current (docs/adr/0003).
ALTER TABLE enterprises ADD COLUMN endpoints_version BIGINT NOT NULL DEFAULT 0;
