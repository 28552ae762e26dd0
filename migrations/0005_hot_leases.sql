-- Lease renewals touch only lease_expires_at, every few seconds for every job and
-- attempt in flight. An index on that column makes each renewal a non-HOT update
-- (a new index entry per renewal); these indexes serve the same scans on columns
-- that a renewal never changes, so renewals stay heap-only. Pages keep room for
-- the new row versions.
DROP INDEX IF EXISTS attempts_inflight_lease;
CREATE INDEX attempts_inflight ON attempts (job_id) WHERE state IN ('starting', 'running');
DROP INDEX IF EXISTS jobs_orphans;
ALTER TABLE jobs SET (fillfactor = 90);
ALTER TABLE attempts SET (fillfactor = 90);
