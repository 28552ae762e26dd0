-- An event's body shows the job as the transition left it.
--
-- An event's body is built at its first delivery try, from the job as read
-- then (internal/store, EventForDelivery; internal/webhook, eventBody). When
-- the job changed again before that try — a failed job retried (RetryJob), an
-- unknown job resolved (ResolveAttempt) or cancelled, a late win — the body
-- showed the job as it had become: a `job.failed` event with a running job, a
-- `job.unknown` event with the same `job.version` as the `job.succeeded` that
-- followed it, contrary to docs/api.md (`job.version` orders the events).
--
-- The outbox trigger now records, on the event row, what a later change can
-- alter of the job resource: `snapshot` is
--   {"job":         the job's columns that the job resource shows and that
--                   change after a job is created: state, version, error,
--                   updated_at, finished_at, result, completed_by, routing
--                   (named one by one: the rest never changes, and copying
--                   the whole row would read the request's input from its
--                   TOAST table on every failure; a column added to the
--                   resource that can change belongs here too),
--    "attempts":    the job's attempts, whole rows, by seq (a resolution or a
--                   cancellation changes an attempt's state, usage, error,
--                   finish; a retry adds attempts),
--    "race_events": the job's race events, whole rows, by id (a resolution
--                   adds some)}
-- as visible to the transaction at the transition (the transitions that
-- record one change the attempts before the job's state, under the job's
-- lock: settleLocked, CancelJob in internal/store). At the first try,
-- when the job's version is no longer the event's job_version, the store reads
-- the job with the recorded fields laid over it (jsonb_populate_record) and
-- the recorded attempts and race events in place of the current ones
-- (jsonb_populate_recordset): the same row types, read with the same columns,
-- so the body is byte for byte what it would have been at the transition. The
-- idempotency key's expiry, which the transition sets after this trigger has
-- run, is derived by the store (internal/store/eventreads.go).
--
-- `job.succeeded` events carry no snapshot: a succeeded job never changes
-- again, so the job read at the first try is the job at the transition. The
-- router's batched wins write their events themselves (0015) and record none
-- either: their statement is unchanged. Events written before this migration
-- have no snapshot and keep being built from the job as it is at their first
-- try. The snapshot costs two index lookups (attempts by (job_id, seq),
-- race_events by (job_id, id)) per failure, cancellation or unknown job of an
-- owner with a webhook, none on the success path. The migration is quick: a
-- column without a default rewrites nothing.
ALTER TABLE job_events ADD COLUMN snapshot jsonb;

CREATE OR REPLACE FUNCTION job_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ev uuid;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhook_owners w WHERE w.owner = NEW.owner) THEN
        RETURN NULL;
    END IF;
    INSERT INTO job_events (job_id, owner, type, job_version, snapshot)
    VALUES (NEW.id, NEW.owner, 'job.' || NEW.state, NEW.version,
        CASE WHEN NEW.state <> 'succeeded' THEN jsonb_build_object(
            'job', jsonb_build_object('state', NEW.state, 'version', NEW.version, 'error', NEW.error,
                'updated_at', NEW.updated_at, 'finished_at', NEW.finished_at, 'result', NEW.result,
                'completed_by', NEW.completed_by, 'routing', NEW.routing),
            'attempts', coalesce((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.seq) FROM attempts a WHERE a.job_id = NEW.id), '[]'),
            'race_events', coalesce((SELECT jsonb_agg(to_jsonb(r) ORDER BY r.id) FROM race_events r WHERE r.job_id = NEW.id), '[]'))
        END)
    RETURNING id INTO ev;
    INSERT INTO river_job (args, kind, max_attempts, queue, priority, metadata, tags)
    VALUES (jsonb_build_object('event_id', ev), 'webhook_delivery', 10000, 'webhooks', 1, '{}', '{}');
    IF current_setting('router.outbox_notify', true) IS DISTINCT FROM 'after_commit' THEN
        PERFORM pg_notify(coalesce(current_schema(), '') || '.river_insert', '{"queue": "webhooks"}');
    END IF;
    RETURN NULL;
END
$$;
