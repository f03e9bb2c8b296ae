DROP INDEX access_tokens_creator;
ALTER TABLE service_users DROP COLUMN disabled;
