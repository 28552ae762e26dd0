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

// SPEC §6.4, §6.8, §6.9: a job whose orchestrator's lease expired while one
// of its attempts is still in flight (a stalled replica: its lease renewal
// lagged, its provider call is still out and its attempt's own lease live)
// is not taken over by a run resumed on another replica (a breaker wait's
// timer, a resolution's or a retry's resumption: store.AcquireJobLease). Such
// a run knew nothing of the attempt: it counted its target as tried and at
// once failed over to the next target beside it — two attempts in flight on
// a route that does not hedge, outside the hedge clock and budget. Recovery's
// adoption never took such a job (ClaimOrphans); the resumed run's lease did.
// The job stays with its orchestrator, whose attempt then wins. Found by
// review.
func TestResumedRunDoesNotTakeAJobWithAnAttemptInFlight(t *testing.T) {
	called, answer := make(chan struct{}, 1), make(chan struct{})
	a := racetest.New(t, racetest.Options{LeaseOwner: "replica-a", Lease: time.Hour, // no renewal during the test
		Route: race.Route{MaxInflight: 2},
		Providers: []racetest.Provider{
			{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
				called <- struct{}{}
				<-answer
				return providers.Step{Output: validTriage}
			}},
			{Name: "fallback", Respond: racetest.OK(otherTriage)},
		}})
	t.Cleanup(func() {
		select {
		case <-answer:
		default:
			close(answer)
		}
	})
	job := a.Submit(t)
	<-called // replica a's attempt on the primary is in flight
	// Replica a stalls: its job lease runs out on the database's clock; its
	// attempt's lease (an hour) does not.
	if _, err := a.DB.Pool.Exec(context.Background(),
		`UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}

	b := racetest.New(t, racetest.Options{DB: a.DB, LeaseOwner: "replica-b", Lease: time.Hour,
		Route: race.Route{MaxInflight: 2},
		Providers: []racetest.Provider{
			{Name: "primary", Respond: racetest.OK(otherTriage)},
			{Name: "fallback", Respond: racetest.OK(otherTriage)},
		}})
	b.Runner.SubmitID(job.ID) // a run resumed on replica b
	b.Stop()                  // waits for that run to end

	j := a.Job(t, job.ID)
	if len(j.Attempts) != 1 || b.Prov["primary"].Calls()+b.Prov["fallback"].Calls() != 0 {
		for _, at := range j.Attempts {
			t.Logf("attempt %d on %s (%s): %s", at.Seq, at.Provider, at.Role, at.State)
		}
		t.Fatalf("job %s: %d attempts, replica b's targets called %d+%d times while replica a's attempt was in flight; want b to leave the job alone",
			j.State, len(j.Attempts), b.Prov["primary"].Calls(), b.Prov["fallback"].Calls())
	}
	var owner string
	if err := a.DB.Pool.QueryRow(context.Background(), `SELECT coalesce(lease_owner, '') FROM jobs WHERE id = $1`, job.ID).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner != "replica-a" {
		t.Fatalf("the job's lease is %q's, want still replica-a's (its attempt is in flight)", owner)
	}

	close(answer) // replica a's attempt answers: it wins
	if j := a.WaitSettled(t, job.ID); j.State != store.JobSucceeded || len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptWon {
		t.Fatalf("job %s with %d attempts; want succeeded by replica a's one attempt", j.State, len(j.Attempts))
	}
}
