-- An attempt's cost_usd becomes a function of its row, computed when read,
-- instead of a STORED generated column. PostgreSQL 15 re-reads and re-plans a
-- generated column's expression at the start of every INSERT and UPDATE
-- statement on the table (ExecInitStoredGenerated), whichever columns it
-- changes: 5% of the database's CPU under `make bench`'s load, the largest
-- single part of its profile, for a value read far less often than attempts
-- are written.
--
-- The value is the same expression over the same columns, so nothing is lost
-- by dropping the stored copies. `a.cost_usd` keeps working in every query
-- that names it through a table alias — PostgreSQL reads `a.cost_usd` as
-- `cost_usd(a)` when the table has no such column — including the queries of
-- a replica of the previous version during a rolling update or after a
-- rollback. One query of that version does not: its operator dashboard sums
-- `cost_usd` over `SELECT *` of attempts, which no longer has the column, so
-- its hedge-cost panel shows an error for as long as that version runs.
--
-- An error in the expression now surfaces when a row is read, not when it is
-- written: a usage whose token counts are not numbers (the router never writes
-- one; only SQL from outside could) used to fail its INSERT or UPDATE and would
-- now fail the reads of that attempt's job.
ALTER TABLE attempts DROP COLUMN cost_usd;

CREATE FUNCTION cost_usd(a attempts) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN a.usage IS NOT NULL AND jsonb_typeof(a.usage) = 'object'
                 AND a.price_input_per_mtok IS NOT NULL AND a.price_output_per_mtok IS NOT NULL
                 AND (coalesce((a.usage ->> 'prompt_tokens')::numeric, 0) > 0
                      OR coalesce((a.usage ->> 'completion_tokens')::numeric, 0) > 0)
            THEN (coalesce((a.usage ->> 'prompt_tokens')::numeric, 0) * a.price_input_per_mtok
                + coalesce((a.usage ->> 'completion_tokens')::numeric, 0) * a.price_output_per_mtok) / 1000000
       END;
