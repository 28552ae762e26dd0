-- The router's batched wins write their outbox rows themselves, set-based.
--
-- The outbox trigger (0006, 0013) runs a PL/pgSQL function for every job that
-- becomes terminal: a lookup of the owner's webhook, then, for an owner with
-- one, an INSERT of the event and an INSERT of River's job, each a statement
-- of its own started and finished per row. In a batched win that is per job,
-- and measured under load it was a fifth of PostgreSQL's CPU for owners with
-- webhooks (docs/performance.md). The batched win statement (internal/store,
-- winSQL) now inserts the events and River's jobs of all its jobs in two
-- set-based inserts of its own, in the same transaction as before, and sets
-- `router.outbox_by_statement = on` for its transaction (batchSettingsSQL);
-- the trigger's condition below then skips those rows without calling the
-- function. The skip is as narrow as what the win writes: a job becoming
-- `succeeded` with its winning attempt recorded, in such a transaction; any
-- other terminal state there, and every transition elsewhere (failure,
-- cancellation, unknown, a late win, a job written by hand), still goes
-- through the trigger. The setting is reserved for the router's batched win:
-- set anywhere else (a session, ALTER ROLE … SET) it would suppress the
-- `job.succeeded` events of that session's wins.
DROP TRIGGER jobs_outbox_update ON jobs;
CREATE TRIGGER jobs_outbox_update AFTER UPDATE OF state ON jobs FOR EACH ROW
    WHEN (NEW.state IS DISTINCT FROM OLD.state AND NEW.state IN ('succeeded', 'failed', 'cancelled', 'unknown')
          AND NOT (NEW.state = 'succeeded' AND NEW.completed_by IS NOT NULL
                   AND coalesce(current_setting('router.outbox_by_statement', true), '') = 'on'))
    EXECUTE FUNCTION job_event_outbox();
