package store

// Price is a target's price in USD per million tokens, stored on each attempt
// at creation (the attempt's cost_usd is derived from it and its usage by the
// database; see migrations/0008_cost.sql).
type Price struct {
	InputPerMTok, OutputPerMTok float64
}

func (p *Price) input() any {
	if p == nil {
		return nil
	}
	return p.InputPerMTok
}

func (p *Price) output() any {
	if p == nil {
		return nil
	}
	return p.OutputPerMTok
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
