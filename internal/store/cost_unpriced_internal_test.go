package store

import (
	"encoding/json"
	"strconv"
	"testing"
)

// A job's cost_usd is left out when an attempt with usage has no cost (its
// target has no price), as when no attempt has one, instead of summing the
// priced attempts alone; lost_cost_usd likewise when such an attempt did not
// win. An unpriced attempt without usage (never sent, nothing reported)
// leaves the totals whole. Found by review.
func TestSumCostsLeavesOutAPartialTotal(t *testing.T) {
	priced := func(state string, c float64) Attempt {
		return Attempt{State: state, CostUSD: &c, Usage: json.RawMessage(`{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}`)}
	}
	unpriced := func(state, usage string) Attempt {
		a := Attempt{State: state}
		if usage != "" {
			a.Usage = json.RawMessage(usage)
		}
		return a
	}
	const used = `{"prompt_tokens":232,"completion_tokens":24,"total_tokens":256}`
	for _, tc := range []struct {
		name       string
		attempts   []Attempt
		cost, lost string // "" for left out
	}{
		{"unpriced winner with usage", []Attempt{priced(AttemptInvalid, 0.0003), unpriced(AttemptWon, used)}, "", "0.0003"},
		{"unpriced loser with usage", []Attempt{unpriced(AttemptInvalid, used), priced(AttemptWon, 0.0002)}, "", ""},
		{"unpriced hedge loser with an estimate", []Attempt{unpriced(AttemptCancelled, `{"prompt_tokens":232,"completion_tokens":0,"total_tokens":232,"estimated":true}`),
			priced(AttemptWon, 0.0002)}, "", ""},
		{"unpriced output only", []Attempt{unpriced(AttemptFailed, `{"prompt_tokens":0,"completion_tokens":"7"}`), priced(AttemptWon, 0.0002)}, "", ""},
		{"unpriced without usage", []Attempt{unpriced(AttemptFailed, ""), priced(AttemptWon, 0.0002)}, "0.0002", "0"},
		{"unpriced with null usage", []Attempt{unpriced(AttemptFailed, "null"), priced(AttemptWon, 0.0002)}, "0.0002", "0"},
		{"unpriced with zero usage", []Attempt{unpriced(AttemptFailed, `{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`),
			priced(AttemptWon, 0.0002)}, "0.0002", "0"},
		{"all unpriced", []Attempt{unpriced(AttemptInvalid, used), unpriced(AttemptWon, used)}, "", ""},
		{"all priced", []Attempt{priced(AttemptInvalid, 0.1), priced(AttemptWon, 0.2)}, "0.3", "0.1"},
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
			t.Errorf("%s: cost_usd %q, lost_cost_usd %q; want %q, %q (\"\": left out)", tc.name, got, lost, tc.cost, tc.lost)
		}
	}
}
