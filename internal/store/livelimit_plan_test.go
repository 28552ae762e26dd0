package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// aliasLoops walks an EXPLAIN ANALYZE plan in JSON and returns, for each
// scan of a relation under alias, its node type, index and actual loops.
func aliasLoops(t *testing.T, js, alias string) (found []string, loops float64) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if n["Alias"] == alias {
			found = append(found, fmt.Sprintf("%v %v", n["Node Type"], n["Index Name"]))
			l, _ := n["Actual Loops"].(float64)
			loops += l
		}
		children, _ := n["Plans"].([]any)
		for _, c := range children {
			if m, ok := c.(map[string]any); ok {
				walk(m)
			}
		}
	}
	plan, _ := doc["Plan"].(map[string]any)
	walk(plan)
	return found, loops
}

func withText(plans []explainedPlan, text string) (out []explainedPlan) {
	for _, p := range plans {
		if strings.Contains(p.Query, text) {
			out = append(out, p)
		}
	}
	return out
}

// max_live_jobs costs an unlimited owner's claim nothing: no lock statement,
// and the claim's count of live jobs (jobs_owner_live) and its look-ups of the
// keys are never run for it. A limited claim counts on the index.
func TestLiveLimitPlan(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	pool, explained := explainingPool(t, b)
	st := store.New(pool, store.Options{})
	owner := uniqueOwner("free")
	for i := range 3 {
		if _, created, err := st.CreateJob(ctx, limitedJob(t, owner, fmt.Sprint(i), 0)); err != nil || !created {
			t.Fatalf("unlimited claim: %v %v", created, err)
		}
	}
	all := explained("")
	if locks := withText(all, "pg_advisory_xact_lock"); len(locks) != 0 {
		t.Errorf("an unlimited owner's claims sent %d lock statements, want none", len(locks))
	}
	plans := withText(all, "INSERT INTO idempotency_keys AS k")
	if len(plans) == 0 {
		t.Fatal("no plan of the claim statement reported")
	}
	for _, p := range plans {
		for _, alias := range []string{"lj", "lk", "p"} {
			if nodes, loops := aliasLoops(t, p.JSON, alias); loops != 0 {
				t.Errorf("unlimited claim ran the limit's %s (%v) %v times, want never\n%s", alias, nodes, loops, p.JSON)
			}
		}
	}
	limited := uniqueOwner("lim")
	if _, created, err := st.CreateJob(ctx, limitedJob(t, limited, "x", 5)); err != nil || !created {
		t.Fatalf("limited claim: %v %v", created, err)
	}
	all = explained("")
	if locks := withText(all, "pg_advisory_xact_lock"); len(locks) != 1 {
		t.Errorf("a limited claim sent %d lock statements, want 1", len(locks))
	}
	for _, p := range withText(all, "INSERT INTO idempotency_keys AS k") {
		nodes, loops := aliasLoops(t, p.JSON, "lj")
		if loops == 0 {
			t.Errorf("the limited claim did not count the owner's live jobs\n%s", p.JSON)
		}
		for _, n := range nodes {
			if n != "Index Only Scan jobs_owner_live" && n != "Index Scan jobs_owner_live" {
				t.Errorf("live jobs counted by %s, want jobs_owner_live\n%s", n, p.JSON)
			}
		}
	}
}
