-- Conformance runs (SPEC §9): one row per provider × prompt version per run of
-- `router conformance run`. The gate reads the latest row of exactly
-- (provider, prompt, prompt_version) and the age of the latest passing one, on the
-- database clock; rows of other prompt versions never count.
CREATE TABLE conformance_runs (
    id             bigserial   PRIMARY KEY,
    provider       text        NOT NULL,
    model          text        NOT NULL DEFAULT '',
    prompt         text        NOT NULL,
    prompt_version text        NOT NULL,
    passed         boolean     NOT NULL,
    cases_total    int         NOT NULL CHECK (cases_total >= 0),
    cases_passed   int         NOT NULL CHECK (cases_passed >= 0 AND cases_passed <= cases_total),
    -- per-case details: name, passed, failures (rule, path, message), latency, usage
    cases          jsonb       NOT NULL DEFAULT '[]',
    suite_digest   text        NOT NULL DEFAULT '',  -- SHA-256 of the suite file that ran
    router_version text        NOT NULL DEFAULT '',
    started_at     timestamptz NOT NULL,
    finished_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (finished_at >= started_at),
    -- a pass means every case passed, and there was at least one
    CHECK (NOT passed OR (cases_total > 0 AND cases_passed = cases_total))
);
CREATE INDEX conformance_runs_latest ON conformance_runs (provider, prompt, prompt_version, finished_at DESC, id DESC);
CREATE INDEX conformance_runs_passing ON conformance_runs (provider, prompt, prompt_version, finished_at DESC) WHERE passed;
