-- The router now passes each attempt's price with the attempt it creates (the
-- creating replica's configured price for the target, SPEC §18), so the
-- per-row trigger that copied it from target_prices is gone. Attempts already
-- made keep the prices stored on them, and so their cost_usd.
--
-- target_prices itself stays, unused, for one release: a replica of the
-- previous version still writes it at start-up, and must keep starting during
-- a rolling update (or a rollback). A later migration drops it.
DROP TRIGGER attempt_price ON attempts;
DROP FUNCTION attempt_price();
