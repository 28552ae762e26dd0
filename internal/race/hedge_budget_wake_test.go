package race_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A hedge the route's hedge budget denied is started as soon as a slot is
// given back, not a whole hedge delay later: the silent attempt it is for
// goes `unknown` at its first-byte deadline, blocking the job, and a hedge
// due past it never starts. The primary's hedge delay is three quarters of
// its first-byte budget (a hedge_after past the budget is clamped to it,
// hedgeDelay), so a denied hedge tried again a hedge delay later always comes
// too late. Two jobs' primaries are silent; the first hedge on b holds the
// budget's one slot until the other job's hedge has been denied, then
// answers and gives the slot back. (Found in review: the denied hedge was
// asked for again only a hedge delay later, and its job ended unknown
// although the budget had been free for most of that time.)
func TestDeniedHedgeStartsWhenTheBudgetSlotIsGivenBack(t *testing.T) {
	const timeout = 8 * time.Second // the primary's first-byte budget; hedge delay: 6 s, leaving the woken hedge 2 s before the primary goes unknown
	obs := &denials{denied: make(chan string, 100)}
	primaryCalls := make(chan string, 10)
	release := make(chan struct{})
	b := setupObserved(t, race.Route{HedgeAfter: time.Hour, HedgeBudgetMin: 1, MaxInflight: 2}, nil, obs,
		provSpec{name: "primary", respond: hang, timeout: timeout,
			onCall: func(_ int, req *providers.Request) { primaryCalls <- req.JobID }},
		provSpec{name: "b", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 { // the first hedge: holds its slot until the other's was denied
				<-release
			}
			return providers.Step{Output: validTriage}
		}},
	)
	j1 := b.submit(t)
	<-primaryCalls
	j2 := b.submit(t)
	defer func() { // a failure below may leave a primary hanging
		for _, id := range []string{j1.ID, j2.ID} {
			_ = b.st.CancelJob(context.Background(), "acme", id)
			b.runner.Cancel(id)
		}
	}()
	<-obs.denied // the second hedge, due while the first holds the slot
	close(release)
	for _, id := range []string{j1.ID, j2.ID} {
		got := b.waitSettled(t, id)
		denied := strings.Contains(string(got.Routing), "hedge_denied")
		if got.State != store.JobSucceeded {
			t.Fatalf("job (hedge denied: %v) is %s (%s; routing %s): its hedge did not start when the slot was given back",
				denied, got.State, roles(got), got.Routing)
		}
		if h := attemptBy(got, "b"); h == nil || h.Role != store.RoleHedge || h.State != store.AttemptWon {
			t.Fatalf("job (hedge denied: %v): attempts %s, want its hedge on b won", denied, roles(got))
		}
	}
}
