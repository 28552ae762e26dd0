package race

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A retry denied by the hedge budget puts back on the hedge clock the silent
// attempts in flight whose hedge did not save them (holdExtra): one whose
// hedge has ended. Not one whose hedge is still in flight: that was hedged
// a second time, beside its first hedge, and the second hedge's start
// overwrote the time the first one had been started after — the silence a
// loser's breaker counts it by (silentPastHedge).
func TestRetryDeniedByTheBudgetDoesNotHedgeAHedgedAttemptAgain(t *testing.T) {
	route := &Route{HedgeAfter: time.Second, HedgeBudgetMin: 1, MaxInflight: 3}
	r := &Runner{cfg: Config{Targets: map[string]*Target{"a": {Timeout: time.Minute}, "b": {Timeout: time.Minute}, "c": {Timeout: time.Minute}}}}
	o := &orchestrator{r: r, route: route, job: &store.Job{ID: "j", Route: "r"}, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		inflight: map[string]context.CancelCauseFunc{}, hedgeDenied: true}
	start := time.Now().Add(-1500 * time.Millisecond)
	for _, a := range []*store.Attempt{{ID: "p", Provider: "a"}, {ID: "h", Provider: "b"}} {
		o.watchFirstByte(context.Background(), a)
		o.flights[a.ID].start = start
		o.inflight[a.ID] = func(error) {}
	}
	// p was hedged by h, which holds the job's one budget slot and is still
	// in flight, silent.
	if ok, why := o.acquireExtra(); !ok {
		t.Fatalf("set-up: the hedge's slot was denied: %s", why)
	}
	p := o.flights["p"]
	p.done, p.hedge = true, "h"
	p.hedgedAfter.Store(int64(time.Second))
	o.waiting()

	// c's retry beside them is denied by the budget (one slot, held).
	if o.holdExtra(context.Background(), "c", store.RoleRetry) {
		t.Fatal("set-up: a second extra call was allowed by a budget of one")
	}
	for _, f := range o.waiting() {
		if f == p {
			t.Fatalf("the attempt on a, hedged and its hedge still in flight, was put back on the hedge clock (due in %s): it would be hedged again",
				time.Until(f.due).Round(time.Millisecond))
		}
	}
	// Its hedge ended (its slot given back, taken by another job's hedge):
	// it is put back, as before.
	delete(o.inflight, "h")
	o.settleExtra()
	release, ok, _ := r.hedges.acquire("r", route)
	if !ok {
		t.Fatal("set-up: the slot given back was not free")
	}
	defer release()
	if o.holdExtra(context.Background(), "c", store.RoleRetry) {
		t.Fatal("set-up: the retry was allowed with the budget's one slot held by another job")
	}
	if !slicesContainsFlight(o.waiting(), p) {
		t.Fatal("the attempt on a, its hedge ended, was not put back on the hedge clock after the retry's denial")
	}
	o.forgetBudgetWake()
}

func slicesContainsFlight(fs []*flight, f *flight) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}
