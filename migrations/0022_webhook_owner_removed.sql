-- A configured webhook that a replica's start removes is marked removed for a
-- while, not deleted, so the events of jobs ending meanwhile are written.
--
-- Each replica writes its configured webhooks (api_keys[].webhook) to
-- webhook_owners when it starts (store.SyncConfigWebhooks), so during a
-- rolling update a replica restarted with an older configuration removes a
-- webhook that a newer one added. The row was deleted, and the outbox (this
-- trigger, and the batched win's statement, internal/store winSQL) writes
-- events only for owners with a row: a job that ended before a replica with
-- the newer configuration started again got no event, ever, though
-- docs/api.md promises that the owner's events are failed tries meanwhile and
-- are delivered once the webhook is back.
--
-- Now the configured webhook's row stays, with url NULL and removed_until set
-- to when the removal started plus the redelivery window (webhooks.retry_for
-- + backoff_cap + timeout, store.Options.RedeliveryWindow). Until then the
-- outbox writes the owner's events as before; the delivery worker reads a row
-- without a url as no webhook (a failed try, retried until the event is
-- webhooks.retry_for old, then abandoned), and a replica with the webhook in
-- its configuration restores the url and clears removed_until, after which the
-- pending events are delivered. After removed_until the outbox writes no more
-- events for the owner (the webhook was removed on purpose), and the next
-- rebuild of the configured webhooks deletes the row. The check stays one
-- lookup of the owner's row by primary key, for the trigger and the batched
-- win alike.
--
-- Only configured webhooks (secret NULL) are marked: a stored key's webhook
-- (secret set) is still deleted when its key is revoked, and a stored key's
-- webhook takes the place of a removed configured one (store.syncKeyWebhooks),
-- as it took the place of a deleted one.
--
-- Quick: a nullable column without a default, a dropped NOT NULL and a check
-- constraint (a scan of this small table, one row per owner with a webhook)
-- rewrite nothing. During a rolling update a replica of the previous version
-- deletes every configured row when it starts, removed or not (its
-- behaviour before this migration); reads a removed row as no webhook when
-- delivering; and its `router keys create`, `revoke` or `rotate-webhook-secret`
-- leaves a removed configured row in the place of the owner's stored key's
-- webhook until a newer replica rebuilds the webhooks (and its `revoke` may
-- warn that it could not read the owner's webhook: it cannot read a NULL url).
ALTER TABLE webhook_owners ALTER COLUMN url DROP NOT NULL;
ALTER TABLE webhook_owners ADD COLUMN removed_until timestamptz;
ALTER TABLE webhook_owners ADD CONSTRAINT webhook_owners_removed
    CHECK ((url IS NULL) = (removed_until IS NOT NULL) AND (removed_until IS NULL OR secret IS NULL));

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
    VALUES (jsonb_build_object('event_id', ev), 'webhook_delivery', 10000, 'webhooks', 1, '{}', '{}');
    IF current_setting('router.outbox_notify', true) IS DISTINCT FROM 'after_commit' THEN
        PERFORM pg_notify(coalesce(current_schema(), '') || '.river_insert', '{"queue": "webhooks"}');
    END IF;
    RETURN NULL;
END
$$;
