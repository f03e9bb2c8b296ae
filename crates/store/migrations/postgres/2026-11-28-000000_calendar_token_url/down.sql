ALTER TABLE calendar_accounts DROP COLUMN token_url;
