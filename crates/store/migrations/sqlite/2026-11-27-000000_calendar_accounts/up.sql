-- Calendar accounts (docs/calendars.md): per enterprise and calendar type, where its rooms'
-- calendars are read and as whom. The password is sealed like endpoint passwords (always with
-- the service key: roomlink presents it itself).
CREATE TABLE calendar_accounts (
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    calendar_type TEXT NOT NULL,
    base_url TEXT NOT NULL,
    username TEXT,
    password_key_id TEXT,
    password_ciphertext BLOB,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (enterprise_id, calendar_type),
    CHECK ((password_key_id IS NULL) = (password_ciphertext IS NULL))
);
