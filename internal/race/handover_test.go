package race_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A job created (with its first attempt) just as its runner stops is never
// sent: the attempt says so, and the job is free at once for another replica
// instead of waiting for a lease to expire and turning unknown.
func TestJobCreatedWhileStoppingIsHandedOver(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)})
	b.stop()
	job := b.submit(t)
	j := b.job(t, job.ID)
	if len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptCancelled {
		t.Fatalf("attempts %+v, want the unsent first attempt cancelled", j.Attempts)
	}
	if b.Prov["primary"].Calls() != 0 {
		t.Fatal("a stopping runner sent the attempt")
	}
	// Another replica adopts it and runs it as new: the unsent attempt counts
	// neither as the primary tried nor against max_attempts (1 here).
	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Route: race.Route{MaxAttempts: 1},
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	other.Runner.RecoverOnce(context.Background(), 10)
	j = other.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded || j.Attempts[len(j.Attempts)-1].Provider != "primary" {
		t.Fatalf("adopted job %s (%v), attempts %+v: want it won on the primary", j.State, j.Error, j.Attempts)
	}
}
