package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// F1b with a realistic cause: a one-second database outage (connections
// refused: a PostgreSQL restart) just as a silent primary's hedge comes due.
// The hedge's creation fails with a connection error, which is none of the
// store's refusals, so the race stops ("could not create an attempt"): no
// hedge and no failover is ever started for the job again, although the
// database is back a moment later. When the primary then fails (503, no
// retries), the job is settled `failed` — its fallback, eligible and
// healthy, never sent the request.
func TestOutageAtHedgeTimeDoesNotStopTheRace(t *testing.T) {
	called, release := make(chan struct{}), make(chan struct{})
	b, proxy, db := outageBundleWith(t, racetest.Options{
		Route: race.Route{HedgeAfter: 200 * time.Millisecond, MaxInflight: 2},
		Providers: []racetest.Provider{
			{Name: "primary", Respond: func(call int, _ *providers.Request) providers.Step {
				if call == 1 {
					close(called)
					<-release
				}
				return providers.Step{Status: 503}
			}},
			{Name: "fallback", Respond: racetest.OK(validTriage)},
		},
	}, nil)
	job := b.Submit(t)
	<-called
	proxy.down() // the hedge comes due 200 ms after the primary's send, during the outage
	time.Sleep(time.Second)
	proxy.up()
	time.Sleep(500 * time.Millisecond)
	close(release) // the primary fails: 503, no retries configured
	deadline := time.Now().Add(30 * time.Second)
	for b.Runner.Runs(job.ID) {
		if time.Now().After(deadline) {
			t.Fatal("the job's run never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	j, err := db.Store.GetJobAny(context.Background(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, a := range j.Attempts {
		states = append(states, a.Provider+"/"+a.Role+"="+a.State)
	}
	errText := ""
	if j.Error != nil {
		errText = *j.Error
	}
	t.Logf("job %s (%q), attempts %v, fallback called %d", j.State, errText, states, b.Prov["fallback"].Calls())
	if j.State == store.JobFailed && b.Prov["fallback"].Calls() == 0 {
		t.Fatalf("job failed (%q) with attempts %v: a one-second database outage at hedge time stopped the race for good; "+
			"the fallback was never sent the request", errText, states)
	}
}
