-- Configuration templates (issue #36): an enterprise's named sets of vendor-neutral settings.
CREATE TABLE templates (
    id TEXT PRIMARY KEY,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    -- The name as names are compared (roomlink_domain::template::record::name_key, Unicode
    -- lower case): the domain computes it, so both backends compare alike.
    name_key TEXT NOT NULL,
    description TEXT,
    -- The settings as the JSON object the API shows (keys of the catalog, canonical values).
    settings TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
-- One name per enterprise; it also serves the list, ordered by name.
CREATE UNIQUE INDEX templates_enterprise_name ON templates (enterprise_id, name_key);
