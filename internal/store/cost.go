package store

// Price is a target's price in USD per million tokens. An attempt is created
// with its target's price as the creating process configures it (FirstAttempt,
// NewAttempt), stored on the attempt row, so the attempt keeps the price it was
// made at and the database derives its cost_usd from the usage the provider
// reported, when the attempt is read (the function cost_usd of
// migrations/0011_attempt_cost_computed.sql, read as a.cost_usd).
type Price struct {
	InputPerMTok, OutputPerMTok float64
}

// parts is the price as the attempt row's two nullable columns.
func (p *Price) parts() (in, out *float64) {
	if p == nil {
		return nil, nil
	}
	return &p.InputPerMTok, &p.OutputPerMTok
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
