-- Batched wins wake River's producers after their commit, not inside it.
--
-- The outbox trigger (0006) wakes River with River's insert notification
-- (pg_notify) in the transaction that makes a job terminal. A transaction
-- that has sent a NOTIFY takes one lock for the whole database at commit and
-- holds it through the commit's WAL flush (see 0012): for an owner with a
-- webhook, every batch of wins notified, so concurrent batches committed one
-- at a time instead of sharing WAL flushes.
--
-- The router's batched statements (the claims and wins of the success path,
-- internal/store) now set `router.outbox_notify = after_commit` for their
-- transaction; the trigger then writes the event and River's job as before
-- but does not notify, and the router sends River's notification itself once
-- the batch has committed (one per batch at most, outside any transaction that
-- writes). Should that notification be lost (a crash between the commit and
-- it), River's periodic fetch finds the job. Every other transition (failure,
-- cancellation, unknown, a late win, a job written by hand) still notifies in
-- its own transaction.
CREATE OR REPLACE FUNCTION job_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
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
    IF current_setting('router.outbox_notify', true) IS DISTINCT FROM 'after_commit' THEN
        PERFORM pg_notify(coalesce(current_schema(), '') || '.river_insert', '{"queue": "webhooks"}');
    END IF;
    RETURN NULL;
END
$$;
