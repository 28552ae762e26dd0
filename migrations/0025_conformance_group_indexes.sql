-- Conformance results are per provider × model × prompt × prompt version
-- (SPEC §15), but the indexes of 0003 lead with (provider, prompt,
-- prompt_version) and leave the model out. The operator views
-- (store.LatestConformanceRuns: /v1/providers, /v1/conformance and the
-- dashboard, every refresh of every open tab) took the latest run of each
-- group with a DISTINCT ON that read and sorted the whole history of
-- conformance_runs, which nothing ever deletes: 36,520 rows read for 20
-- latest runs. The gate (store.ConformanceStandingOf, asked for a model)
-- read through the runs and passes of the target's other models, and its
-- lists of the other passed versions and models read every pass of the
-- prompt.
--
-- With these two indexes the views walk the distinct groups (one index
-- lookup each) and take each group's latest run and latest pass with one
-- lookup each, and the gate reads one entry for each: the cost grows with
-- the number of groups, not with the history. The indexes of 0003 stay: the
-- gate asked for any model reads them.
--
-- Like every migration this runs in one transaction, so each index is built
-- while writes to conformance_runs wait (only `router conformance run`
-- writes there; reads are not blocked). With a large table, build them first
-- without blocking writes:
--   CREATE INDEX CONCURRENTLY conformance_runs_group_latest ON conformance_runs (provider, model, prompt, prompt_version, finished_at DESC, id DESC);
--   CREATE INDEX CONCURRENTLY conformance_runs_group_passing ON conformance_runs (provider, model, prompt, prompt_version, finished_at DESC) WHERE passed;
-- and this migration then builds nothing. An index such a build left
-- INVALID (it failed or was interrupted, or is still running) is dropped and
-- built again here, as 0021 does for the indexes of 0016 and 0019: a still
-- running build holds a lock the DROP waits for, so the migration gives up
-- after its lock wait and tries again (store.Migrate), and then finds it
-- valid.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_index WHERE indexrelid = to_regclass('conformance_runs_group_latest') AND NOT indisvalid) THEN
        DROP INDEX conformance_runs_group_latest;
    END IF;
    IF EXISTS (SELECT FROM pg_index WHERE indexrelid = to_regclass('conformance_runs_group_passing') AND NOT indisvalid) THEN
        DROP INDEX conformance_runs_group_passing;
    END IF;
END
$$;
CREATE INDEX IF NOT EXISTS conformance_runs_group_latest
    ON conformance_runs (provider, model, prompt, prompt_version, finished_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS conformance_runs_group_passing
    ON conformance_runs (provider, model, prompt, prompt_version, finished_at DESC) WHERE passed;
