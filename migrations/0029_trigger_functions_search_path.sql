-- The router's functions name its tables without a schema, and ran with the
-- search_path of whoever changed the row: the router's own sessions have
-- their schema first (database_url ?search_path=router), but a job written by
-- hand (an operator's UPDATE router.jobs ... in psql, which the outbox
-- trigger serves as any transition, migration 0013) did not.
--
-- From a session whose search_path lacks the router's schema, the outbox
-- trigger failed ("relation "webhook_owners" does not exist") and took the
-- operator's UPDATE with it, even for an owner without a webhook. From one
-- whose search_path named another schema with a river_job table first (an
-- application using River in public, search_path "public, router"), the
-- event was written to the router's job_events and its River job to the
-- other schema's river_job: nothing delivered the event, nor gave up on it,
-- and it stayed pending. Its wake (pg_notify on current_schema() ||
-- '.river_insert') went to that other schema's River too.
--
-- Each function now runs with the search_path of the schema this migration
-- runs in — the router's: its connection's current_schema(), the schema its
-- tables and River's were created in and whose '<schema>.river_insert'
-- channel River listens on — then pg_temp last, so that no temporary table
-- of the caller's stands in for one of the router's. The schema is written
-- out by name, not taken FROM CURRENT: a default search_path ("$user",
-- public) would resolve to another schema for a caller whose role has one of
-- its name. Inside the functions current_schema() is then the router's
-- schema, whoever calls them, so the outbox's wake keeps its channel.
--
-- router_uuid_v7() (migration 0014, the default of job_events.id) is left
-- alone: it names only built-in functions, which pg_catalog, searched first
-- whatever the search_path, provides; a SET clause would cost a settings save
-- and restore on each call, one per event a win writes, for nothing.
--
-- cost_usd(attempts) (migration 0011) is left alone too: its body is SQL-standard
-- (RETURN ...), resolved when it was created, so no search_path applies to
-- it, and a SET clause would stop the planner inlining it into the queries
-- that sum costs.
--
-- CREATE OR REPLACE FUNCTION drops a function's settings: a later migration
-- that creates or replaces a function must pin it again, after it, with the
-- DO block below (the schema's name is not known when the migration is
-- written); internal/store TestRouterFunctionsPinTheirSearchPath fails
-- otherwise.
--
-- ALTER FUNCTION changes one catalog row, takes no table lock and is
-- instant. A replica of the previous version runs the same functions, and
-- its own sessions already had the router's schema first: nothing changes
-- for it, so a rolling update is safe.
DO $$
DECLARE
    s text := current_schema();
BEGIN
    IF s IS NULL THEN
        RAISE EXCEPTION 'the search_path names no existing schema, so the router''s schema is unknown: set search_path=<the router''s schema> in database_url';
    END IF;
    EXECUTE format('ALTER FUNCTION %I.job_event_outbox() SET search_path = %I, pg_temp', s, s);
    EXECUTE format('ALTER FUNCTION %I.idempotency_key_released() SET search_path = %I, pg_temp', s, s);
END
$$;
