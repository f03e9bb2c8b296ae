-- Outbound listeners stay, with base_url '': the older code cannot read them (an internal
-- error). Delete or convert them before going back.
DROP TABLE listener_links;
ALTER TABLE listener_services DROP COLUMN connection;
