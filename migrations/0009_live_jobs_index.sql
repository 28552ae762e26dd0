-- Per-owner limits (SPEC §17) count an owner's live jobs: this index serves that
-- count without reading the owner's finished jobs.
CREATE INDEX jobs_owner_live ON jobs (owner) WHERE state IN ('pending', 'running', 'unknown');
