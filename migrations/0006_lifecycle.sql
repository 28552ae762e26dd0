-- Job lifecycle (SPEC §16): completion events through a transactional outbox,
-- webhook deliveries, listing, retention and leader election.

-- Owners that have a webhook. The outbox trigger writes events only for them, so
-- owners without a webhook pay nothing. Synced at startup from the configuration
-- (secret NULL: the secret comes from api_keys[].webhook.secret_env) and from
-- stored keys created with --webhook-url (secret stored on the key).
CREATE TABLE webhook_owners (
    owner      text        PRIMARY KEY,
    url        text        NOT NULL,
    secret     text,
    updated_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE api_keys ADD COLUMN webhook_url text;
ALTER TABLE api_keys ADD COLUMN webhook_secret text;

-- One row per announced transition. id is the webhook-id, stable across
-- redeliveries; body is frozen at the first delivery try so every redelivery
-- sends the same bytes.
CREATE TABLE job_events (
    id            uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    job_id        uuid        NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    owner         text        NOT NULL,
    type          text        NOT NULL,
    job_version   bigint      NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    status        text        NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'delivered', 'abandoned')),
    tries         int         NOT NULL DEFAULT 0,
    last_error    text,
    delivered_at  timestamptz,
    body          bytea
);
CREATE INDEX job_events_job ON job_events (job_id, created_at);
CREATE INDEX job_events_open ON job_events (created_at) WHERE status = 'pending';

-- Each delivery try.
CREATE TABLE webhook_deliveries (
    id          bigserial   PRIMARY KEY,
    event_id    uuid        NOT NULL REFERENCES job_events (id) ON DELETE CASCADE,
    try         int         NOT NULL,
    url         text        NOT NULL,
    started_at  timestamptz NOT NULL,
    latency_ms  bigint      NOT NULL,
    status_code int,
    error       text
);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id, id);

-- The outbox: a row-level trigger writes the event and its River delivery job
-- in whatever transaction changes a job's state (one statement or a batched
-- multi-row UPDATE alike), so the announcement commits or rolls back with the
-- transition itself. The River job row is inserted with plain SQL into River's
-- table (columns of River's v0.51 schema; defaults for the rest) and River's
-- producers are woken with River's own insert notification.
CREATE FUNCTION job_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ev uuid;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhook_owners w WHERE w.owner = NEW.owner) THEN
        RETURN NULL;
    END IF;
    INSERT INTO job_events (job_id, owner, type, job_version)
    VALUES (NEW.id, NEW.owner, 'job.' || NEW.state, NEW.version)
    RETURNING id INTO ev;
    INSERT INTO river_job (args, kind, max_attempts, queue, priority, metadata, tags)
    VALUES (jsonb_build_object('event_id', ev), 'webhook_delivery', 10000, 'webhooks', 1, '{}', '{}');
    PERFORM pg_notify(coalesce(current_schema(), '') || '.river_insert', '{"queue": "webhooks"}');
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_outbox_update AFTER UPDATE OF state ON jobs FOR EACH ROW
    WHEN (NEW.state IS DISTINCT FROM OLD.state AND NEW.state IN ('succeeded', 'failed', 'cancelled', 'unknown'))
    EXECUTE FUNCTION job_event_outbox();
CREATE TRIGGER jobs_outbox_insert AFTER INSERT ON jobs FOR EACH ROW
    WHEN (NEW.state IN ('succeeded', 'failed', 'cancelled', 'unknown'))
    EXECUTE FUNCTION job_event_outbox();

-- Listing (GET /v1/jobs): newest first per owner with a keyset on (created_at, id).
CREATE INDEX jobs_owner_created_id ON jobs (owner, created_at DESC, id DESC);
DROP INDEX jobs_owner_created;

-- Retention: keys by expiry, and the expiry of keys that were taken over by a
-- new job (the old job no longer has a key row to say when its key expired).
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE released_keys (
    job_id     uuid        PRIMARY KEY,
    expired_at timestamptz NOT NULL
);
CREATE INDEX released_keys_expiry ON released_keys (expired_at);

CREATE FUNCTION idempotency_key_released() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO released_keys (job_id, expired_at) VALUES (OLD.job_id, coalesce(OLD.expires_at, now()))
    ON CONFLICT (job_id) DO NOTHING;
    RETURN NULL;
END
$$;
CREATE TRIGGER idempotency_keys_released AFTER UPDATE OF job_id ON idempotency_keys FOR EACH ROW
    WHEN (NEW.job_id IS DISTINCT FROM OLD.job_id)
    EXECUTE FUNCTION idempotency_key_released();

-- Leader election: one lease row per role, renewed on the database clock.
CREATE TABLE leader_leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL
);
