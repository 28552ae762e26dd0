package ops_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The dashboard's cost tiles sum priced attempts only: an attempt with usage
// on a target without a price is left out of "spent" (as a job with one has
// no cost_usd). The tiles say how many were left out, so "spent" is not read
// as the whole; with none left out nothing more is shown.
func TestDashboardCountsUnpricedAttempts(t *testing.T) {
	db := testdb.New(t, store.Options{})
	page := func() string {
		srv := httptest.NewServer(ops.New(ops.Config{Priced: true}, db.Store, nil, nil))
		defer srv.Close()
		return getPage(t, srv.URL+"/dashboard")
	}
	if p := page(); strings.Contains(p, `id="unpriced"`) {
		t.Errorf("no unpriced attempt, but the dashboard counts some:\n%s", costSection(p))
	}
	ctx := context.Background()
	input := json.RawMessage(`{}`)
	fp, err := store.Fingerprint("triage", "", "", input)
	if err != nil {
		t.Fatal(err)
	}
	j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "unpriced", Fingerprint: fp,
		PromptVersion: "2", Route: "default", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]int{"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010}
	for _, p := range []struct {
		provider string
		price    *store.Price
	}{{"priced", &store.Price{InputPerMTok: 1, OutputPerMTok: 1}}, {"unpriced", nil}} {
		a, err := db.Store.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: p.provider, Role: store.RolePrimary, LeaseOwner: "test", Price: p.price})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Store.MarkAttemptRunning(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.Store.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed, Usage: used}); err != nil {
			t.Fatal(err)
		}
	}
	p := page()
	if !strings.Contains(p, `<div class="tile warn" id="unpriced"><b>1</b><span>attempts with usage on targets without a price, not counted above`) {
		t.Errorf("an attempt with usage on an unpriced target: want the dashboard to count it beside the cost tiles:\n%s", costSection(p))
	}
}
