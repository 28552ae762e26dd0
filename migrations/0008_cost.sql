-- Cost accounting (SPEC §18): each attempt carries the price of its target at
-- creation (USD per million tokens) and its cost is derived, by the database,
-- from the usage the provider reported. A job's cost_usd and lost_cost_usd are
-- sums over its attempts, computed when the job is read.
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
