-- The orchestration lease of a job: the router process that decides its next
-- attempt. Another replica takes the job over only once the lease has expired
-- (crash recovery), and CreateAttempt refuses an orchestrator that lost it.
ALTER TABLE jobs ADD COLUMN lease_owner text;
ALTER TABLE jobs ADD COLUMN lease_expires_at timestamptz;
-- attempt_base: attempts made before the caller's last explicit retry; the
-- max_attempts bound counts attempts after it.
ALTER TABLE jobs ADD COLUMN attempt_base int NOT NULL DEFAULT 0;
CREATE INDEX jobs_orphans ON jobs (lease_expires_at) WHERE state IN ('pending', 'running');
CREATE INDEX attempts_unknown ON attempts (provider) WHERE state = 'unknown';
