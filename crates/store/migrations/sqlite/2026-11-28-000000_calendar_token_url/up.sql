-- Where the OAuth readers (Microsoft Graph, Google) ask for access tokens; CalDAV leaves it null.
ALTER TABLE calendar_accounts ADD COLUMN token_url TEXT;
