-- The last check of each inbound listener (GET /v1/info, once per status poll round, by the
-- instance holding the poll lease), for the listeners API's health, version and last contact.
-- answered_ms and version are the last answer's, kept when a later check fails; error is the
-- catalog name of the last check's error and error_message its message, NULL when it was
-- answered.
CREATE TABLE listener_checks (
    listener_id TEXT NOT NULL PRIMARY KEY REFERENCES listener_services (id) ON DELETE CASCADE,
    checked_ms BIGINT NOT NULL,
    answered_ms BIGINT,
    version TEXT,
    error TEXT,
    error_message TEXT
);
