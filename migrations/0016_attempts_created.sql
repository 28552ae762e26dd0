-- The operator's views over a recent window (/v1/providers and the dashboard:
-- ProviderStats, RecentCounters, RecentHedgeCost in internal/store) read
-- attempts by `created_at > now() - window`. The index 0004 made for them,
-- (provider, created_at), leads with the provider, which such a range cannot
-- use, so PostgreSQL read the whole table: with 200,000 attempts, a 5-minute
-- window took a parallel sequential scan of 46 ms instead of 0.24 ms through
-- this index, and it grows with the table. Replaced rather than added
-- beside: no query reads attempts by provider and time, and every insert and
-- every non-HOT update of an attempt writes each of its indexes.
--
-- Like every migration this runs in one transaction, so the index is built
-- while writes to attempts wait. With a large attempts table, build it first
-- without blocking writes — `CREATE INDEX CONCURRENTLY attempts_created ON
-- attempts (created_at)` — and this migration then only drops the old index
-- (docs/operations.md, "Upgrading").
CREATE INDEX IF NOT EXISTS attempts_created ON attempts (created_at);
DROP INDEX IF EXISTS attempts_provider_created;
