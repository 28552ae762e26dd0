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

// Issue 11: a job that runs longer than a tick still has its lease and its
// attempt's lease renewed (young jobs are skipped, not forgotten), and wins.
func TestLongJobLeasesAreRenewed(t *testing.T) {
	release := make(chan struct{})
	rb := racetest.New(t, racetest.Options{
		Route: race.Route{},
		Providers: []racetest.Provider{{Name: "primary", Timeout: time.Minute,
			Respond: func(int, *providers.Request) providers.Step {
				<-release
				return providers.Step{Output: validTriage}
			}}},
		Lease: 600 * time.Millisecond, // a tick every 200ms
	})
	job := rb.Submit(t)
	ctx := context.Background()
	lease := func() (j, a time.Time) {
		t.Helper()
		if err := rb.DB.Pool.QueryRow(ctx, `SELECT j.lease_expires_at, a.lease_expires_at
			FROM jobs j JOIN attempts a ON a.job_id = j.id WHERE j.id = $1`, job.ID).Scan(&j, &a); err != nil {
			t.Fatal(err)
		}
		return j, a
	}
	j0, a0 := lease()
	deadline := time.Now().Add(20 * time.Second)
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		j, a := lease()
		if !j.Equal(j0) && !a.Equal(a0) { // renewed: set to now + lease again
			break
		}
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("the leases of a job running for 20s were never renewed: job %v (was %v), attempt %v (was %v)", j, j0, a, a0)
		}
		<-poll.C
	}
	close(release)
	if got := rb.WaitSettled(t, job.ID); got.State != store.JobSucceeded {
		t.Fatalf("job %s, want succeeded", got.State)
	}
}
