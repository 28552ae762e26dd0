-- Conformance runs record the digest of the target they ran against
-- (conformance.TargetDigest: the provider's type, its base_url, the model, and
-- the request settings the target applies — stream, supports_lookup, an
-- Anthropic provider's default max_tokens, a scripted provider's script). A
-- pass was bound only to the target's id and model, so a target repointed in
-- the configuration (openai-backup moved from api.openai.com to a self-hosted
-- server with the same model name) kept every earlier pass, and took failover
-- traffic on an endpoint that never ran the suite. The gate and the operator
-- views now count a run only for the target settings it was recorded against.
-- The API key, timeouts, retries, breaker, connection pool, price, context
-- window and tokenizer are not in the digest: they do not change the answers
-- (routing checks the window and tokenizer on every job).
--
-- Nullable: runs recorded before this migration (and by a router without it,
-- during a rolling upgrade) have no digest, and stay admitted for any target
-- settings, as they were — an upgrade does not withdraw existing passes.
-- docs/conformance.md recommends a rerun after upgrading. A digest, when
-- recorded, is a hex SHA-256.
ALTER TABLE conformance_runs ADD COLUMN IF NOT EXISTS target_digest text
    CONSTRAINT conformance_runs_target_digest_sha256 CHECK (target_digest ~ '^[0-9a-f]{64}$');
