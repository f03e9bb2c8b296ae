DROP TABLE health_history;
