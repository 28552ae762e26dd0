package race_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An attempt whose lease expired (recovery made it and its job unknown) and
// whose provider then answered with a definitive failure is resolved failed
// by its own run, which moves the job back to running with no lease: the
// runner submits it again, so the race goes on (here on the fallback) without
// a recovery pass (none runs in this test).
func TestLateFailureResolutionResumesTheJob(t *testing.T) {
	release := make(chan struct{})
	sent := make(chan struct{})
	var once sync.Once
	b := racetest.New(t, racetest.Options{
		Providers: []racetest.Provider{
			{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
				once.Do(func() { close(sent) })
				<-release
				return providers.Step{Status: 400}
			}},
			{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
		}})
	ctx := context.Background()
	job := b.SubmitUnplanned(t)
	<-sent
	if _, err := b.DB.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.Store.JobStateAny(ctx, job.ID); st != store.JobUnknown {
		t.Fatalf("after expiry: %s, want unknown", st)
	}
	changed, unsubscribe := b.Listener.Subscribe(job.ID)
	defer unsubscribe()
	close(release)
	// Woken by the job's notifications; the bound only fails a job that
	// nobody resumes, as WaitSettled's does.
	timeout := time.After(60 * time.Second)
	for {
		st, err := b.Store.JobStateAny(ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if store.IsTerminal(st) {
			break
		}
		select {
		case <-changed:
		case <-timeout:
			j := b.Job(t, job.ID)
			t.Fatalf("job still %s after its only unknown attempt was resolved failed (attempts %d, fallback calls %d): nobody resumed it",
				j.State, len(j.Attempts), b.Prov["fallback"].Calls())
		}
	}
	j := b.Job(t, job.ID)
	if j.State != store.JobSucceeded || b.Prov["fallback"].Calls() != 1 {
		t.Fatalf("job %s, fallback calls %d; want succeeded on the fallback", j.State, b.Prov["fallback"].Calls())
	}
	if a := racetest.AttemptOn(j, "primary"); a == nil || a.State != store.AttemptFailed {
		t.Fatalf("primary attempt %+v, want failed (resolved by its late failure)", a)
	}
}
