-- A conformance run without a prompt digest (migration 0023) or a target
-- digest (0024) counts for any prompt content and any target settings: that
-- was meant for the runs recorded before the router recorded them, so that an
-- upgrade withdrew no pass. But nothing limited it to those runs: a router
-- binary older than 0023/0024 (a CI image pinned to an older release) kept
-- inserting runs without digests, and the gate admitted them for an edited
-- prompt and a repointed target.
--
-- The runs without both digests recorded before this migration are marked
-- legacy, and only a legacy run may lack a digest: a router binary that does
-- not record both digests can no longer record a run (its INSERT fails on
-- the check conformance_runs_digests_required_upgrade_router — upgrade that
-- binary), and the gate and the operator views count a missing digest as
-- matching only on a legacy run. The current router records both on every
-- run.
ALTER TABLE conformance_runs ADD COLUMN IF NOT EXISTS legacy boolean NOT NULL DEFAULT false;
UPDATE conformance_runs SET legacy = true WHERE NOT legacy AND (prompt_digest IS NULL OR target_digest IS NULL);
ALTER TABLE conformance_runs DROP CONSTRAINT IF EXISTS conformance_runs_digests_required_upgrade_router;
ALTER TABLE conformance_runs ADD CONSTRAINT conformance_runs_digests_required_upgrade_router
    CHECK (legacy OR (prompt_digest IS NOT NULL AND target_digest IS NOT NULL));
COMMENT ON CONSTRAINT conformance_runs_digests_required_upgrade_router ON conformance_runs IS
    'A conformance run records the prompt and target digests (migrations 0023, 0024); a router binary that records neither is too old to record runs: upgrade it. Only runs recorded before migration 0028 (legacy) may lack them.';
COMMENT ON COLUMN conformance_runs.legacy IS
    'Recorded before migration 0028 without both digests: a missing digest counts for any prompt content or target settings. Never set by the router.';
