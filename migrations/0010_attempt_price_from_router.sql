-- The router now passes each attempt's price with the attempt it creates (the
-- creating replica's configured price for the target, SPEC §18), so the
-- per-row trigger that copied it from target_prices, and the table itself
-- (written at start-up, the last replica started holding), are gone. Attempts
-- already made keep the prices stored on them, and so their cost_usd.
DROP TRIGGER attempt_price ON attempts;
DROP FUNCTION attempt_price();
DROP TABLE target_prices;
