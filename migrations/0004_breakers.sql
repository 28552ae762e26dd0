-- Circuit breaker states as each router process (replica) sees them (SPEC §10).
-- Every replica upserts its own rows regularly and on every state change;
-- readers keep only rows whose updated_at is recent on the database clock, so a
-- replica that died ages out without anyone deleting it. changed_at is when the
-- breaker last changed state, also on the database clock (the publisher sends
-- "seconds since the change", never its own wall clock).
CREATE TABLE breaker_states (
    replica               text        NOT NULL,
    provider              text        NOT NULL,
    state                 text        NOT NULL CHECK (state IN ('closed', 'half-open', 'open')),
    requests              bigint      NOT NULL DEFAULT 0,
    successes             bigint      NOT NULL DEFAULT 0,
    failures              bigint      NOT NULL DEFAULT 0,
    exclusions            bigint      NOT NULL DEFAULT 0,
    consecutive_successes bigint      NOT NULL DEFAULT 0,
    consecutive_failures  bigint      NOT NULL DEFAULT 0,
    changed_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (replica, provider)
);
CREATE INDEX breaker_states_updated ON breaker_states (updated_at);

-- Recent per-provider statistics (/v1/providers, the dashboard) read attempts by
-- provider over a recent window.
CREATE INDEX attempts_provider_created ON attempts (provider, created_at);
-- The dashboard lists the most recent jobs.
CREATE INDEX jobs_created ON jobs (created_at DESC);
