-- When an event was abandoned, and an index of the recently abandoned ones.
--
-- The operator dashboard listed only pending events whose last try failed: an
-- event the delivery worker gave up on (answered 410 Gone, abandoned at that
-- try; or a try failed when it was webhooks.retry_for old) left the list at
-- that moment, and the page said "no failing deliveries" right after an event
-- was lost for good. It now lists the events abandoned in the last day,
-- newest first (store.RecentlyAbandonedEvents), which needs when each was
-- abandoned: nothing recorded it (delivered_at is set only by a delivery, and
-- created_at says nothing of it: an event abandoned for its age was created
-- webhooks.retry_for before).
--
-- abandoned_at is set by a trigger on the database clock when an event's
-- status becomes 'abandoned', whoever writes it: the delivery worker's record
-- of a try (store recordSQL) of this version or of the previous one during a
-- rolling update, or an operator's UPDATE by hand. The trigger's WHEN is
-- evaluated without calling the function for every other update (a try that
-- delivers or fails), so those cost nothing more.
--
-- The events abandoned before this migration get the end of their last try
-- (else their creation): they are listed while that is within the last day.
--
-- The column is nullable without a default: adding it rewrites nothing, but
-- ALTER TABLE holds an exclusive lock on job_events (reads wait too) until
-- this migration's transaction commits, so it is added only when missing (a
-- catalog check first). The trigger's creation makes writes to job_events
-- wait until the commit (every job's end writes an event there), not reads;
-- the index is partial (abandoned events only), but its build reads the
-- whole table meanwhile. Like every migration this runs in one transaction;
-- with a large job_events, add the column and build the index first without
-- blocking reads or writes:
--   ALTER TABLE job_events ADD COLUMN IF NOT EXISTS abandoned_at timestamptz;
--   CREATE INDEX CONCURRENTLY job_events_abandoned ON job_events (abandoned_at) WHERE status = 'abandoned';
-- and this migration then builds nothing. An index such a build left INVALID
-- is dropped and built again here, as 0025 does.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_attribute
            WHERE attrelid = 'job_events'::regclass AND attname = 'abandoned_at' AND NOT attisdropped) THEN
        ALTER TABLE job_events ADD COLUMN abandoned_at timestamptz;
    END IF;
END
$$;

UPDATE job_events e SET abandoned_at = coalesce(
    (SELECT max(d.started_at + d.latency_ms * interval '1 millisecond') FROM webhook_deliveries d WHERE d.event_id = e.id),
    e.created_at)
WHERE e.status = 'abandoned' AND e.abandoned_at IS NULL;

CREATE FUNCTION job_event_abandoned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.abandoned_at := now();
    RETURN NEW;
END
$$;

CREATE TRIGGER job_events_abandoned_at BEFORE UPDATE OF status ON job_events FOR EACH ROW
    WHEN (NEW.status = 'abandoned' AND OLD.status IS DISTINCT FROM 'abandoned')
    EXECUTE FUNCTION job_event_abandoned();

-- The router's functions run with its schema as their search_path
-- (migration 0029).
DO $$
DECLARE
    s text := current_schema();
BEGIN
    IF s IS NULL THEN
        RAISE EXCEPTION 'the search_path names no existing schema, so the router''s schema is unknown: set search_path=<the router''s schema> in database_url';
    END IF;
    EXECUTE format('ALTER FUNCTION %I.job_event_abandoned() SET search_path = %I, pg_temp', s, s);
    IF EXISTS (SELECT FROM pg_index WHERE indexrelid = to_regclass('job_events_abandoned') AND NOT indisvalid) THEN
        DROP INDEX job_events_abandoned;
    END IF;
END
$$;
CREATE INDEX IF NOT EXISTS job_events_abandoned ON job_events (abandoned_at) WHERE status = 'abandoned';
