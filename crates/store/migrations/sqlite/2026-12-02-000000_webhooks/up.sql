-- Webhooks (docs/operations.md "Webhooks"): an enterprise's subscriptions, the outbox of their
-- deliveries, and the health states that room and listener events are computed against.
CREATE TABLE webhook_subscriptions (
    id TEXT PRIMARY KEY,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    -- The event types it wants, as ',room.offline,call.ended,': one LIKE finds the subscribers
    -- of a type in the transaction that records an event.
    event_types TEXT NOT NULL,
    description TEXT,
    -- The signing secret, sealed with the service key (the service signs with it).
    secret_key_id TEXT NOT NULL,
    secret_ciphertext BLOB NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    -- Set while deliveries are stopped: when and why.
    paused_ms BIGINT,
    paused_reason TEXT,
    -- The instance delivering its outbox, until when (a dead instance's claim expires).
    lease_owner TEXT,
    lease_until_ms BIGINT
);
CREATE INDEX webhook_subscriptions_enterprise ON webhook_subscriptions (enterprise_id, created_ms);
-- The outbox: one row per event and subscription, delivered in seq order per subscription.
CREATE TABLE webhook_deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    enterprise_id TEXT NOT NULL,
    -- The webhook-id header: the receivers' idempotency key.
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    -- Exactly the signed body.
    body TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    -- pending, delivered or failed (roomlink_domain::webhook::DeliveryState).
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_ms BIGINT,
    last_attempt_ms BIGINT,
    last_status INTEGER,
    last_error TEXT,
    done_ms BIGINT
);
-- The head of a subscription's outbox, and its listing newest first.
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, state, seq);
-- Retention deletes finished deliveries by when they finished.
CREATE INDEX webhook_deliveries_done ON webhook_deliveries (done_ms);
-- What the health watch last recorded of each room and listener: a change from it is an event.
CREATE TABLE health_states (
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    -- room or listener
    subject_kind TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    state TEXT NOT NULL,
    changed_ms BIGINT NOT NULL,
    PRIMARY KEY (enterprise_id, subject_kind, subject_id)
);
