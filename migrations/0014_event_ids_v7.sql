-- Outbox event ids are version 7 UUIDs (RFC 9562), as job and attempt ids are
-- since the router makes them (internal/store/ids.go): the first 48 bits are
-- the time in milliseconds, so new events enter job_events' primary key and
-- webhook_deliveries' (event_id, id) index at their right edge, pages already
-- in memory, instead of at a random leaf. PostgreSQL 15 has no uuidv7(): this
-- takes a random (version 4) UUID, writes the clock (milliseconds, rounded
-- down as RFC 9562 has it) into its first six bytes
-- and sets the version nibble from 0100 to 0111 (bits 52 and 53; set_bit
-- numbers bits from the right within each byte). Only the default changes:
-- existing rows keep their ids.
CREATE FUNCTION router_uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
    SELECT encode(
        set_bit(set_bit(
            overlay(uuid_send(gen_random_uuid())
                PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                FROM 1 FOR 6),
            52, 1), 53, 1),
        'hex')::uuid
$$;

ALTER TABLE job_events ALTER COLUMN id SET DEFAULT router_uuid_v7();
