package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A job one of whose failed attempts has usage and no price (its target is
// unpriced) shows neither cost_usd nor lost_cost_usd — both would be the
// priced attempts' alone — wherever it is read (GetJob; webhook bodies and
// lists take the same sum); and the dashboard's cost over recent attempts,
// which sums the priced ones, counts the unpriced attempts it leaves out.
// An unpriced attempt without usage counts in neither. Found by review.
func TestUnpricedAttemptWithUsageLeavesOutJobCosts(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "unpriced", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]int{"prompt_tokens": 100000, "completion_tokens": 0, "total_tokens": 100000}
	for _, at := range []struct {
		provider string
		price    *store.Price
		usage    any
	}{
		{"priced", &store.Price{InputPerMTok: 1, OutputPerMTok: 1}, used},
		{"unpriced", nil, used},
		{"unpriced-unused", nil, nil},
	} {
		a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: at.provider, Role: store.RolePrimary, LeaseOwner: "test", Price: at.price})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed, Usage: at.usage}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(got.AppendJSON(nil), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cost_usd", "lost_cost_usd"} {
		if v, ok := m[k]; ok {
			t.Errorf("job %s %s although its attempt on target unpriced has usage and no price: the sum is partial; attempts %s", k, v, m["attempts"])
		}
	}
	h, err := b.st.RecentHedgeCost(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if h.UnpricedAttempts != 1 || h.TotalUSD != 0.1 {
		t.Errorf("recent cost: %+v; want total_usd 0.1 (the priced attempt) and unpriced_attempts 1", *h)
	}
}
