-- Jobs: one durable row per caller intent. Attempts accumulate under it.
CREATE TABLE jobs (
    id              uuid PRIMARY KEY,
    owner           text        NOT NULL,
    operation       text        NOT NULL,
    idempotency_key text        NOT NULL,
    fingerprint     bytea       NOT NULL,
    prompt_version  text        NOT NULL,
    route           text        NOT NULL,
    input           jsonb       NOT NULL,
    params          jsonb       NOT NULL DEFAULT '{}',
    state           text        NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'running', 'succeeded', 'failed', 'cancelled', 'unknown')),
    version         bigint      NOT NULL DEFAULT 1,
    completed_by    uuid,
    result          jsonb,
    error           text,
    routing         jsonb,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    CHECK ((state = 'succeeded') = (completed_by IS NOT NULL AND result IS NOT NULL))
);
CREATE INDEX jobs_owner_created ON jobs (owner, created_at DESC);
CREATE INDEX jobs_open ON jobs (state) WHERE state IN ('pending', 'running');

-- Idempotency keys: the claim on (owner, operation, key). The unique constraint is
-- the guarantee; expires_at is NULL while the job is not terminal (never expires).
CREATE TABLE idempotency_keys (
    owner           text        NOT NULL,
    operation       text        NOT NULL,
    idempotency_key text        NOT NULL,
    job_id          uuid        NOT NULL REFERENCES jobs (id) DEFERRABLE INITIALLY DEFERRED,
    fingerprint     bytea       NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz,
    PRIMARY KEY (owner, operation, idempotency_key)
);
CREATE INDEX idempotency_keys_job ON idempotency_keys (job_id);

-- Attempts: one try on one provider.
CREATE TABLE attempts (
    id                   uuid PRIMARY KEY,
    job_id               uuid        NOT NULL REFERENCES jobs (id),
    seq                  int         NOT NULL CHECK (seq > 0),
    provider             text        NOT NULL,
    model                text        NOT NULL DEFAULT '',
    role                 text        NOT NULL CHECK (role IN ('primary', 'retry', 'failover', 'hedge')),
    state                text        NOT NULL DEFAULT 'starting'
        CHECK (state IN ('starting', 'running', 'won', 'lost', 'failed', 'invalid', 'cancelled', 'unknown')),
    read_version         bigint      NOT NULL,
    lease_owner          text,
    lease_expires_at     timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now(),
    started_at           timestamptz,
    finished_at          timestamptz,
    latency_ms           bigint,
    usage                jsonb,
    provider_response_id text,
    response_model       text,
    error                jsonb,
    validation_errors    jsonb,
    UNIQUE (job_id, seq)
);
CREATE INDEX attempts_inflight_lease ON attempts (lease_expires_at) WHERE state IN ('starting', 'running');

-- Race events: what happened to results that did not win, and other races.
CREATE TABLE race_events (
    id          bigserial PRIMARY KEY,
    job_id      uuid        NOT NULL REFERENCES jobs (id),
    attempt_id  uuid        REFERENCES attempts (id),
    kind        text        NOT NULL,
    provider    text,
    latency_ms  bigint,
    usage       jsonb,
    detail      text,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX race_events_job ON race_events (job_id, id);

-- API keys created with `router keys create`; only a SHA-256 hash is stored.
CREATE TABLE api_keys (
    id          bigserial PRIMARY KEY,
    owner       text        NOT NULL,
    key_hash    bytea       NOT NULL UNIQUE,
    prefix      text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
