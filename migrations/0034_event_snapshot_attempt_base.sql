-- An event's snapshot of the job holds its attempt_base too.
--
-- The outbox snapshot (migration 0017) records the job's columns that the job
-- resource shows and that change after the job is created, so that an event
-- first tried after the job changed again still shows the job as its
-- transition left it. attempt_base was not among them: the resource does not
-- show it, but its next_step reads it (internal/race, GatedNote: a target the
-- conformance gate refused is named only when this round never tried it,
-- attempt seq > attempt_base). The caller's retry moves it (RetryJobKeyed),
-- so a job.failed event first tried after the retry was built with the
-- failed round's attempts and routing but the new round's attempt_base: none
-- of its attempts counted as tried this round, and a target that was tried
-- and then refused by the gate for a later role of the race was named as
-- skipped by the gate, its next_step telling the caller to wait for the
-- router's operator, frozen into every redelivery.
--
-- The trigger's function now adds 'attempt_base' to the snapshot's job
-- (otherwise as migration 0026 left it), and the store lays it over the
-- current row like the other columns. An event recorded before this
-- migration, still unsent, has no attempt_base in its snapshot: the store
-- reads it as 0 when the job's version has moved and its attempt_base is
-- past the recorded attempts, which only a later retry does
-- (internal/store/eventreads.go).
--
-- Only the function changes: no table is locked or rewritten. The batched
-- win's statement (internal/store winSQL) records no snapshot (a succeeded
-- job never changes). A replica of the previous version reads the snapshot
-- through jsonb_populate_record as well, so the new key serves its reads
-- too: a rolling update is safe.
CREATE OR REPLACE FUNCTION job_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ev uuid;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhook_owners w WHERE w.owner = NEW.owner
                   AND (w.removed_until IS NULL OR w.removed_until > now())) THEN
        RETURN NULL;
    END IF;
    INSERT INTO job_events (job_id, owner, type, job_version, snapshot)
    VALUES (NEW.id, NEW.owner, 'job.' || NEW.state, NEW.version,
        CASE WHEN NEW.state <> 'succeeded' THEN jsonb_build_object(
            'job', jsonb_build_object('state', NEW.state, 'version', NEW.version, 'error', NEW.error,
                'updated_at', NEW.updated_at, 'finished_at', NEW.finished_at, 'result', NEW.result,
                'completed_by', NEW.completed_by, 'routing', NEW.routing, 'attempt_base', NEW.attempt_base),
            'attempts', coalesce((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.seq) FROM attempts a WHERE a.job_id = NEW.id), '[]'),
            'race_events', coalesce((SELECT jsonb_agg(to_jsonb(r) ORDER BY r.id) FROM race_events r WHERE r.job_id = NEW.id), '[]'))
        END)
    RETURNING id INTO ev;
    INSERT INTO river_job (args, kind, max_attempts, queue, priority, metadata, tags)
    VALUES (jsonb_build_object('event_id', ev, 'owner', NEW.owner), 'webhook_delivery', 10000, 'webhooks', 1, '{}', '{}');
    IF current_setting('router.outbox_notify', true) IS DISTINCT FROM 'after_commit' THEN
        PERFORM pg_notify(coalesce(current_schema(), '') || '.river_insert', '{"queue": "webhooks"}');
    END IF;
    RETURN NULL;
END
$$;

-- CREATE OR REPLACE FUNCTION dropped the function's search_path (migration
-- 0029): pinned again.
DO $$
DECLARE
    s text := current_schema();
BEGIN
    IF s IS NULL THEN
        RAISE EXCEPTION 'the search_path names no existing schema, so the router''s schema is unknown: set search_path=<the router''s schema> in database_url';
    END IF;
    EXECUTE format('ALTER FUNCTION %I.job_event_outbox() SET search_path = %I, pg_temp', s, s);
END
$$;
