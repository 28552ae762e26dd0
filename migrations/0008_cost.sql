-- Cost accounting (SPEC §18). The configured prices live in target_prices (one
-- row per route target, written at start-up from the configuration); a trigger
-- copies the target's price onto each attempt as it is created, so an attempt
-- keeps the price it was made at, and the database derives the attempt's cost
-- from the usage the provider reported. A job's cost_usd and lost_cost_usd are
-- sums over its attempts, computed when the job is read.
CREATE TABLE target_prices (
    target          text PRIMARY KEY,   -- attempts.provider: the target id
    input_per_mtok  numeric NOT NULL CHECK (input_per_mtok >= 0),
    output_per_mtok numeric NOT NULL CHECK (output_per_mtok >= 0),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE attempts
    ADD COLUMN price_input_per_mtok  numeric CHECK (price_input_per_mtok >= 0),
    ADD COLUMN price_output_per_mtok numeric CHECK (price_output_per_mtok >= 0),
    ADD COLUMN cost_usd numeric GENERATED ALWAYS AS (
        CASE WHEN usage IS NOT NULL AND jsonb_typeof(usage) = 'object'
                  AND price_input_per_mtok IS NOT NULL AND price_output_per_mtok IS NOT NULL
                  AND (coalesce((usage ->> 'prompt_tokens')::numeric, 0) > 0
                       OR coalesce((usage ->> 'completion_tokens')::numeric, 0) > 0)
             THEN (coalesce((usage ->> 'prompt_tokens')::numeric, 0) * price_input_per_mtok
                 + coalesce((usage ->> 'completion_tokens')::numeric, 0) * price_output_per_mtok) / 1000000
        END) STORED;

CREATE FUNCTION attempt_price() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.price_input_per_mtok IS NULL THEN
        SELECT p.input_per_mtok, p.output_per_mtok INTO NEW.price_input_per_mtok, NEW.price_output_per_mtok
        FROM target_prices p WHERE p.target = NEW.provider;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER attempt_price BEFORE INSERT ON attempts FOR EACH ROW EXECUTE FUNCTION attempt_price();
