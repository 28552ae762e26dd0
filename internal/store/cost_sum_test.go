package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A job's cost_usd and lost_cost_usd are the exact decimal sums of the costs
// its attempts show: attempts of 0.1 and 0.2 USD make 0.3, not the float64
// sum 0.30000000000000004.
func TestJobCostIsTheExactSumOfItsAttempts(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "cost", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	price := &store.Price{InputPerMTok: 1, OutputPerMTok: 1}
	// 0.1 and 0.2 USD, whose float64 sum is 0.30000000000000004.
	for i, tokens := range []int{100000, 200000} {
		a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: fmt.Sprintf("p%d", i+1),
			Role: store.RolePrimary, LeaseOwner: "test", Price: price})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		usage := map[string]int{"prompt_tokens": tokens, "completion_tokens": 0, "total_tokens": tokens}
		if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed, Usage: usage}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Cost     json.Number `json:"cost_usd"`
		Lost     json.Number `json:"lost_cost_usd"`
		Attempts []struct {
			Cost json.Number `json:"cost_usd"`
		} `json:"attempts"`
	}
	if err := decodeNumbers(got.AppendJSON(nil), &m); err != nil {
		t.Fatal(err)
	}
	// The sum, exact, of the decimals the attempts show.
	want := new(big.Rat)
	for _, a := range m.Attempts {
		r, ok := new(big.Rat).SetString(string(a.Cost))
		if !ok {
			t.Fatalf("attempt cost_usd %q is not a number", a.Cost)
		}
		want.Add(want, r)
	}
	if want.Cmp(big.NewRat(3, 10)) != 0 {
		t.Fatalf("attempts' costs %v sum to %s; the test expects 0.1 + 0.2", m.Attempts, want.FloatString(20))
	}
	for name, n := range map[string]json.Number{"cost_usd": m.Cost, "lost_cost_usd": m.Lost} {
		r, ok := new(big.Rat).SetString(string(n))
		if !ok || r.Cmp(want) != 0 {
			t.Fatalf("job %s %s; want %s, the exact sum of its attempts' %v", name, n, want.FloatString(1), m.Attempts)
		}
	}
}

func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}
