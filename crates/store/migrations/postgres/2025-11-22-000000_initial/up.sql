-- roomlink's schema on PostgreSQL. Keep migrations/sqlite in step: src/schema.rs describes both.
-- Times are milliseconds since the Unix epoch (BIGINT). `seq` columns keep insertion order,
-- which is the order the API lists rows in.

CREATE TABLE enterprises (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    endpoint_limit BIGINT NOT NULL,
    public_key TEXT
);

CREATE TABLE service_users (
    id TEXT PRIMARY KEY,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL
);
CREATE INDEX service_users_enterprise ON service_users (enterprise_id);

-- Only the SHA-256 (hex) of a token value is stored, never the value.
CREATE TABLE access_tokens (
    id TEXT PRIMARY KEY,
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    enterprise_name TEXT NOT NULL,
    creation_date BIGINT NOT NULL,
    expiration_date BIGINT NOT NULL,
    roles TEXT NOT NULL,
    client_name TEXT,
    creator TEXT,
    platform_id BIGINT,
    first_name TEXT,
    last_name TEXT,
    pairing_code_id TEXT,
    pairing_endpoint_id TEXT,
    client_device_type TEXT
);
CREATE INDEX access_tokens_enterprise ON access_tokens (enterprise_id, seq);
CREATE INDEX access_tokens_expiration ON access_tokens (expiration_date);

CREATE TABLE listener_services (
    id TEXT PRIMARY KEY,
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    base_url TEXT NOT NULL,
    asset_id TEXT,
    external_id TEXT,
    location TEXT,
    point_of_contact TEXT,
    secret_key_id TEXT NOT NULL,
    secret_ciphertext BYTEA NOT NULL,
    -- Lets endpoints reference a listener of their own enterprise only.
    UNIQUE (enterprise_id, id)
);

-- One column per field of the domain's EndpointRecord; the password only sealed.
CREATE TABLE endpoints (
    id TEXT PRIMARY KEY,
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    name TEXT,
    ip_address TEXT,
    port INTEGER,
    listener_service_id TEXT,
    control_protocol TEXT,
    signaling_protocol TEXT,
    dial_style TEXT,
    address_style TEXT,
    username TEXT,
    calendar_id TEXT,
    calendar_type TEXT,
    custom_data TEXT,
    announcement_id TEXT,
    asset_id TEXT,
    auto_join_mode TEXT,
    calendar_push_mode TEXT,
    contact_list_id TEXT,
    elevation DOUBLE PRECISION,
    external_id TEXT,
    geolocation TEXT,
    in_meeting_controls TEXT,
    location TEXT,
    manual_meeting_dialer TEXT,
    meeting_privacy_mode TEXT,
    mesh_base_uri TEXT,
    point_of_contact TEXT,
    register_to_sip_proxy TEXT,
    validate_passcodes TEXT,
    zero_touch_type TEXT,
    password_key_id TEXT,
    password_ciphertext BYTEA,
    CONSTRAINT endpoints_enterprise_calendar_key UNIQUE (enterprise_id, calendar_id),
    FOREIGN KEY (enterprise_id, listener_service_id)
        REFERENCES listener_services (enterprise_id, id)
);
CREATE INDEX endpoints_enterprise ON endpoints (enterprise_id, seq);
CREATE INDEX endpoints_listener ON endpoints (enterprise_id, listener_service_id);

-- One current code per endpoint.
CREATE TABLE pairing_codes (
    id TEXT PRIMARY KEY,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    endpoint_id TEXT NOT NULL UNIQUE REFERENCES endpoints (id) ON DELETE CASCADE,
    code TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
);

-- No foreign key to tokens or endpoints: a Zero Touch use records its pairing whatever else
-- happens to them; delete_token and delete_endpoint remove the rows themselves.
CREATE TABLE paired_statuses (
    token_id TEXT PRIMARY KEY,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    endpoint_id TEXT NOT NULL,
    username TEXT,
    first_name TEXT,
    last_name TEXT,
    client_device_type TEXT,
    creation_date BIGINT NOT NULL,
    heartbeat_date BIGINT NOT NULL
);
CREATE INDEX paired_statuses_endpoint ON paired_statuses (enterprise_id, endpoint_id);
CREATE INDEX paired_statuses_heartbeat ON paired_statuses (heartbeat_date);

CREATE TABLE endpoint_statuses (
    endpoint_id TEXT PRIMARY KEY REFERENCES endpoints (id) ON DELETE CASCADE,
    enterprise_id TEXT NOT NULL,
    call_active BOOLEAN NOT NULL,
    reserved BOOLEAN NOT NULL,
    dialing BOOLEAN NOT NULL,
    microphone_muted BOOLEAN NOT NULL,
    last_dial_timestamp_millis BIGINT,
    timestamp BIGINT NOT NULL
);
CREATE INDEX endpoint_statuses_enterprise ON endpoint_statuses (enterprise_id);

CREATE TABLE failures (
    id TEXT PRIMARY KEY,
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    subject_class TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    error_date BIGINT NOT NULL,
    error_code BIGINT NOT NULL,
    error_name TEXT NOT NULL,
    error_message TEXT NOT NULL,
    -- A JSON object.
    error_details TEXT NOT NULL
);
CREATE INDEX failures_enterprise ON failures (enterprise_id, seq);
CREATE INDEX failures_error_date ON failures (error_date);
