-- Rotation of a stored key's webhook secret (`router keys
-- rotate-webhook-secret`, store.RotateWebhookSecret). Before it, the only way
-- to change the secret of a webhook made with `router keys create
-- --webhook-url` was a new key: the old secret stopped at once, and every
-- delivery failed at the receiver until it switched. Now the replaced secret
-- is kept beside the new one until webhook_previous_until, and while that is
-- later than now() (the database's clock, whichever replica reads it) each
-- delivery carries a second Standard Webhooks signature made with it, as a
-- configured webhook's api_keys[].webhook.previous_secret_env does.
--
-- The secret and its end are set together, so either both are NULL or
-- neither is. A passed end is not cleared: every reader compares it with
-- now() (store.WebhookFor, store.ListAPIKeys), and the next rotation
-- overwrites it.
--
-- webhook_owners, the owners' effective webhooks, carries the same two
-- columns for a stored key's webhook (rebuilt by syncKeyWebhooks from the
-- key syncKeyWebhooks picks); a configured webhook (secret NULL) has neither:
-- its previous secret comes from the environment.
--
-- Nullable columns without defaults: adding them rewrites nothing. During a
-- rolling update a replica of the previous version signs with the new secret
-- only (a receiver still on the old one refuses its tries, and a newer
-- replica's retry delivers them), and its rebuild of webhook_owners (at its
-- start, or an older `router keys create` or `revoke`) drops the previous
-- secret there until a newer version rebuilds it.
ALTER TABLE api_keys ADD COLUMN webhook_previous_secret text;
ALTER TABLE api_keys ADD COLUMN webhook_previous_until timestamptz;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_webhook_previous
    CHECK ((webhook_previous_secret IS NULL) = (webhook_previous_until IS NULL));

ALTER TABLE webhook_owners ADD COLUMN previous_secret text;
ALTER TABLE webhook_owners ADD COLUMN previous_until timestamptz;
