package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Price is a target's price in USD per million tokens.
type Price struct {
	InputPerMTok, OutputPerMTok float64
}

// SetTargetPrices makes prices (by target id) the prices of new attempts: a
// trigger copies an attempt's target's price onto it when it is created
// (migrations/0008_cost.sql), and its cost_usd follows from its usage. Targets
// absent from prices lose their price. Attempts already made keep theirs. With
// several replicas, the configuration that last called this holds.
func (s *Store) SetTargetPrices(ctx context.Context, prices map[string]Price) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		targets := make([]string, 0, len(prices))
		ins := make([]float64, 0, len(prices))
		outs := make([]float64, 0, len(prices))
		for t, p := range prices {
			targets, ins, outs = append(targets, t), append(ins, p.InputPerMTok), append(outs, p.OutputPerMTok)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM target_prices WHERE NOT (target = ANY($1::text[]))`, targets); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO target_prices (target, input_per_mtok, output_per_mtok)
			SELECT * FROM unnest($1::text[], $2::float8[], $3::float8[])
			ON CONFLICT (target) DO UPDATE SET input_per_mtok = EXCLUDED.input_per_mtok,
				output_per_mtok = EXCLUDED.output_per_mtok, updated_at = now()`, targets, ins, outs)
		return err
	})
}

// sumCosts sets the job's cost_usd (every attempt) and lost_cost_usd (every
// attempt that did not win) from its attempts' costs.
func (j *Job) sumCosts() {
	var total, lost float64
	priced := false
	for _, a := range j.Attempts {
		if a.CostUSD == nil {
			continue
		}
		priced = true
		total += *a.CostUSD
		if a.State != AttemptWon {
			lost += *a.CostUSD
		}
	}
	if !priced {
		j.CostUSD, j.LostCostUSD = nil, nil
		return
	}
	j.CostUSD, j.LostCostUSD = &total, &lost
}
