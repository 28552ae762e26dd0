-- The outbox writes the event's owner into its River job's args, beside the
-- event's id: {"event_id": …, "owner": …}.
--
-- All owners' deliveries share one River queue, fetched oldest first, and a
-- replica bounds each owner's deliveries in flight
-- (webhooks.max_inflight_per_owner): a delivery over the bound is snoozed.
-- The worker read the event from the database to learn its owner before it
-- could tell, so every waiting event of an owner over its bound cost a read
-- and a fetch each time it came back, and a backlog of thousands took the
-- replica's whole fetch capacity, holding up every other owner's events.
-- With the owner in the args the worker snoozes such a delivery without
-- reading anything (internal/webhook Worker.Work); a job queued before this
-- migration, without the owner, is read as before.
--
-- Only the trigger's function changes (as migration 0022 left it, but for
-- the args); the batched win's statement (internal/store winSQL) writes the
-- same args. A replica of the previous version ignores the new key.
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
                'completed_by', NEW.completed_by, 'routing', NEW.routing),
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
