-- Rebuilds the indexes of 0016 and 0019 that an interrupted concurrent build
-- left INVALID.
--
-- docs/operations.md ("Upgrading") tells operators of large tables to build
-- attempts_created (0016), jobs_open_created and race_events_attempt (0019)
-- with CREATE INDEX CONCURRENTLY before upgrading. A concurrent build that
-- fails or is interrupted (Ctrl-C, statement_timeout, lock_timeout, a
-- deadlock, a duplicate) does not remove what it began: it leaves an index of
-- that name marked INVALID (pg_index.indisvalid false), which writes keep up
-- to date but the planner never reads. The migrations' CREATE INDEX IF NOT
-- EXISTS then found the name taken and built nothing, and 0019 went on to
-- drop jobs_open: recovery's orphan scan was left with no usable index of
-- the open jobs (reading every job of the table each pass, 0.85-1.9 s at
-- 500,000 jobs), retention's deletion of attempts with none on race events'
-- attempt_id, the window views with none on attempts' created_at — silently,
-- as nothing reports an INVALID index.
--
-- Each of the three found INVALID is dropped and built again here, with the
-- definition of its migration; a valid one, or a missing one (0016 and 0019
-- build them when they run), is left alone. Like every migration this runs
-- in one transaction, so a rebuild is not concurrent: writes to its table wait
-- while it is built. To avoid that, drop the INVALID index and build it
-- concurrently again before upgrading (docs/operations.md, "Upgrading"). An
-- index being built concurrently right now is INVALID too until its build
-- ends; its build holds a lock on the table that the DROP here waits for, so
-- the migration gives up after its lock wait and tries again (store.Migrate:
-- 30 tries over about 90 s, then it fails with nothing applied): once that
-- build is done its index is valid and left alone.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_index WHERE indexrelid = to_regclass('attempts_created') AND NOT indisvalid) THEN
        DROP INDEX attempts_created;
        CREATE INDEX attempts_created ON attempts (created_at);
    END IF;
    IF EXISTS (SELECT FROM pg_index WHERE indexrelid = to_regclass('jobs_open_created') AND NOT indisvalid) THEN
        DROP INDEX jobs_open_created;
        CREATE INDEX jobs_open_created ON jobs (created_at) WHERE state IN ('pending', 'running');
    END IF;
    IF EXISTS (SELECT FROM pg_index WHERE indexrelid = to_regclass('race_events_attempt') AND NOT indisvalid) THEN
        DROP INDEX race_events_attempt;
        CREATE INDEX race_events_attempt ON race_events (attempt_id);
    END IF;
END
$$;
