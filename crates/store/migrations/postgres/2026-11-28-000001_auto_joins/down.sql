DROP TABLE auto_joins;
