package store

import (
	"math"
	"strconv"
	"testing"
)

// sumCosts adds the attempts' costs as the decimals they show, exactly, and
// rounds only the result: a job's cost_usd and lost_cost_usd, written as the
// shortest decimal of the float64, are the exact sums of its attempts'.
func TestSumCostsIsExactInDecimal(t *testing.T) {
	priced := func(state string, c float64) Attempt { return Attempt{State: state, CostUSD: &c} }
	unpriced := Attempt{State: AttemptFailed}
	tenths := make([]Attempt, 10)
	for i := range tenths {
		tenths[i] = priced(AttemptFailed, 0.1)
	}
	for _, tc := range []struct {
		name       string
		attempts   []Attempt
		cost, lost string // "" for nil
	}{
		{"no attempt", nil, "", ""},
		{"unpriced attempts", []Attempt{unpriced, unpriced}, "", ""},
		{"one winner", []Attempt{priced(AttemptWon, 0.0021)}, "0.0021", "0"},
		{"one loser among unpriced", []Attempt{unpriced, priced(AttemptLost, 0.1), unpriced}, "0.1", "0.1"},
		{"0.1 + 0.2", []Attempt{priced(AttemptFailed, 0.1), priced(AttemptFailed, 0.2)}, "0.3", "0.3"},
		{"ten tenths", tenths, "1", "1"},
		{"hedge won", []Attempt{priced(AttemptLost, 0.0019), priced(AttemptWon, 0.0002), priced(AttemptLost, 0.0007)},
			"0.0028", "0.0026"},
		{"tiny and large", []Attempt{priced(AttemptFailed, 1234.5678), priced(AttemptFailed, 0.0000001), priced(AttemptFailed, 0.3)},
			"1234.8678001", "1234.8678001"},
		{"negative (a provider's negative token counts)", []Attempt{priced(AttemptFailed, 0.3), priced(AttemptFailed, -0.1)},
			"0.2", "0.2"},
	} {
		j := &Job{Attempts: tc.attempts}
		j.sumCosts()
		show := func(f *float64) string {
			if f == nil {
				return ""
			}
			return strconv.FormatFloat(*f, 'f', -1, 64)
		}
		if got, lost := show(j.CostUSD), show(j.LostCostUSD); got != tc.cost || lost != tc.lost {
			t.Errorf("%s: cost_usd %q, lost_cost_usd %q; want %q, %q (\"\": none)", tc.name, got, lost, tc.cost, tc.lost)
		}
	}
}

// A cost that is not a finite number (which the database cannot hold) is
// summed as a float64, without failing the read.
func TestSumCostsOfANonFiniteCost(t *testing.T) {
	inf, one := math.Inf(1), 1.0
	j := &Job{Attempts: []Attempt{{State: AttemptFailed, CostUSD: &inf}, {State: AttemptFailed, CostUSD: &one}}}
	j.sumCosts()
	if j.CostUSD == nil || !math.IsInf(*j.CostUSD, 1) {
		t.Fatalf("cost_usd %v; want +Inf (the float64 sum)", j.CostUSD)
	}
}
