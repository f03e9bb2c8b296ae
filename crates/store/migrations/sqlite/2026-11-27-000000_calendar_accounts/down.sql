DROP TABLE calendar_accounts;
