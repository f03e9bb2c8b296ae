ALTER TABLE enterprises DROP COLUMN endpoints_version;
