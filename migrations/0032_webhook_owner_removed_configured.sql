-- A configured webhook marked removed (migration 0022) keeps its owner's
-- webhook from stored keys until its removed_until.
--
-- During a rolling update (or a rollback) a replica started with an older
-- configuration marks removed a configured webhook (api_keys[].webhook) that
-- a newer one set, so that the owner's events are failed tries until a
-- replica with the newer configuration starts again, then delivered to the
-- configured receiver (docs/api.md, "Shutdown and rolling updates"). But the
-- same start rebuilt the stored keys' webhooks (store.syncKeyWebhooks), and
-- an owner's unrevoked key made with --webhook-url, earlier overridden by the
-- configured webhook, took the removed row at once: the events of the gap
-- were signed with the key's secret and sent to the key's stale URL,
-- delivered there and lost to the configured receiver. `router keys create
-- --webhook-url` and `rotate-webhook-secret` in the gap were accepted, then
-- silently overridden when the newer replica started.
--
-- removed_configured marks a row removed from the configuration, as opposed
-- to one removed when its owner's last hooked key was revoked (which a new
-- key's webhook takes back at once, as before). Until removed_until the
-- stored keys' webhooks do not take such a row, and a key's new webhook or
-- rotation for its owner is refused (store.ConfiguredWebhookError); after
-- removed_until the row is deleted, as before, and the owner's newest hooked
-- key's webhook is its webhook again.
--
-- Rows removed before this migration cannot be told apart (a configured
-- webhook's and a revoked key's look alike: url, secret NULL): they get
-- false, which keeps their behaviour of before (a key's webhook may take
-- them) until their removed_until, at most one redelivery window.
--
-- A replica of the previous version does not know the column: it restores a
-- removed configured row (its configuration sets the webhook again), lets a
-- key's webhook take one, or marks a row removed without touching it. The
-- trigger below clears the flag of any row written that is not a removed
-- configured one (with a url or a secret, or not removed), so such writes
-- keep the check below true instead of failing the older replica's start or
-- key command; a configured webhook the previous version marks removed gets
-- false (its own rebuild lets a key's webhook take it in the same
-- transaction anyway).
--
-- Quick: a column with a constant default and a check constraint on this
-- small table (one row per owner with a webhook) rewrite nothing; the trigger
-- runs on writes of webhook_owners only (replica starts, key commands).
ALTER TABLE webhook_owners ADD COLUMN removed_configured boolean NOT NULL DEFAULT false;

CREATE FUNCTION webhook_owner_removed_configured() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.url IS NOT NULL OR NEW.secret IS NOT NULL OR NEW.removed_until IS NULL THEN
        NEW.removed_configured := false;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER webhook_owners_removed_configured BEFORE INSERT OR UPDATE ON webhook_owners
    FOR EACH ROW EXECUTE FUNCTION webhook_owner_removed_configured();

ALTER TABLE webhook_owners ADD CONSTRAINT webhook_owners_removed_configured
    CHECK (NOT removed_configured OR (url IS NULL AND secret IS NULL AND removed_until IS NOT NULL));

-- Pinned as migration 0029 pins the router's functions.
DO $$
DECLARE
    s text := current_schema();
BEGIN
    IF s IS NULL THEN
        RAISE EXCEPTION 'the search_path names no existing schema, so the router''s schema is unknown: set search_path=<the router''s schema> in database_url';
    END IF;
    EXECUTE format('ALTER FUNCTION %I.webhook_owner_removed_configured() SET search_path = %I, pg_temp', s, s);
END
$$;
