package race

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A retry or failover the route's hedge budget denies (holdExtra) is recorded
// under the routing's `hedge_denied` event, and its reason says it was a
// retry or a failover, not a hedge; the budget's own words count calls in
// flight beyond one per job, not hedges.
func TestDeniedCallSaysWhatWasDenied(t *testing.T) {
	var b hedgeBudgets
	route := &Route{HedgeBudgetMin: 1}
	done := b.jobStarted("r")
	defer done()
	rel, ok, _ := b.acquire("r", route)
	if !ok {
		t.Fatal("the budget's only slot was refused")
	}
	defer rel()
	_, ok, why := b.acquire("r", route)
	if ok {
		t.Fatal("a second slot was granted beside the first")
	}
	if strings.Contains(why, "hedges") || !strings.Contains(why, "1 call in flight beyond one per job") {
		t.Fatalf("budget's reason %q: want it to count calls in flight beyond one per job", why)
	}
	for role, want := range map[string]string{
		store.RoleRetry:    "a retry on p was denied: the route's hedge budget is spent: ",
		store.RoleFailover: "a failover to p was denied: the route's hedge budget is spent: ",
		store.RoleHedge:    "a hedge on p was denied: the route's hedge budget is spent: ",
	} {
		if got := deniedCall(role, "p", why); !strings.HasPrefix(got, want) {
			t.Errorf("%s denied: reason %q, want it to begin %q", role, got, want)
		}
	}
}
