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
-- function. Every other transition (failure, cancellation, unknown, a late
-- win, a job written by hand) still goes through the trigger.
DROP TRIGGER jobs_outbox_update ON jobs;
CREATE TRIGGER jobs_outbox_update AFTER UPDATE OF state ON jobs FOR EACH ROW
    WHEN (NEW.state IS DISTINCT FROM OLD.state AND NEW.state IN ('succeeded', 'failed', 'cancelled', 'unknown')
          AND current_setting('router.outbox_by_statement', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION job_event_outbox();
