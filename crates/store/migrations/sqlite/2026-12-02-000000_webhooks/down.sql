DROP TABLE health_states;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_subscriptions;
