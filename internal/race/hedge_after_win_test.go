package race_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A hedge whose creation committed just before the primary's win is not sent
// once the job has succeeded, even when losers are kept running (nothing in
// memory cancels it then): the win records it as never sent, and its
// orchestrator, finding it no longer starting, does not send it.
func TestHedgeNotSentAfterPrimaryWon(t *testing.T) {
	release := make(chan struct{})
	b := racetest.New(t, racetest.Options{
		Route: race.Route{HedgeAfter: 20 * time.Millisecond, HedgeBudgetMin: 1, KeepLosers: true},
		Providers: []racetest.Provider{
			{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
				<-release
				return providers.Step{Output: racetest.ValidTriage}
			}},
			{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
		}})
	var once sync.Once
	b.Store.SetAfterCreateAttempt(func(a *store.Attempt) error {
		if a.Role != store.RoleHedge {
			return nil
		}
		// The hedge's row has committed; before its orchestrator marks it
		// running, the primary answers and its win commits (announced on
		// the listener).
		once.Do(func() {
			changed, unsubscribe := b.Listener.Subscribe(a.JobID)
			defer unsubscribe()
			close(release)
			for {
				st, err := b.Store.JobStateAny(context.Background(), a.JobID)
				if err != nil {
					t.Error(err)
					return
				}
				if st == store.JobSucceeded {
					return
				}
				<-changed
			}
		})
		return nil
	})
	job := b.SubmitUnplanned(t)
	j := b.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s", j.State)
	}
	b.Stop()
	if n := b.Prov["fallback"].Calls(); n != 0 {
		t.Fatalf("the hedge was sent %d time(s) after its job had succeeded", n)
	}
	j = b.Job(t, job.ID)
	h := racetest.AttemptOn(j, "fallback")
	if h == nil || !store.NotSent(*h) {
		t.Fatalf("hedge %+v, want recorded as never sent", h)
	}
}
