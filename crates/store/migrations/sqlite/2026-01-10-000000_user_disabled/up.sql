-- `roomlink admin user disable|enable`: a disabled service user cannot sign in.
ALTER TABLE service_users ADD COLUMN disabled BOOLEAN NOT NULL DEFAULT 0;
-- `roomlink admin user ...` revokes the tokens a user created (creator, no platform id).
CREATE INDEX access_tokens_creator ON access_tokens (enterprise_id, creator);
