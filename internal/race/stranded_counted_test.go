package race_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A job no replica can run, failed by the recovery leader once it has waited
// execution.handover_wait (failStranded), is a job this process settled:
// router_jobs_settled_total counts it (it did not: the settle bypassed the
// Observer). Found by review.
func TestStrandedJobFailedByTheLeaderIsCounted(t *testing.T) {
	s := setupStranded(t)
	s.orphanedFor(t, "1 hour")
	obs := &settlements{counts: map[string]int{}}
	leader := racetest.New(t, racetest.Options{DB: s.newer.DB, LeaseOwner: "leader", Observer: obs,
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	leader.Runner.RecoverOnce(context.Background(), 10)
	if j := leader.Job(t, s.job.ID); j.State != store.JobFailed {
		t.Fatalf("precondition: job %s (%v), want it failed by the leader", j.State, j.Error)
	}
	leader.Stop()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.counts[store.JobFailed] != 1 || len(obs.counts) != 1 {
		t.Fatalf("settlements reported %v for the stranded job the leader failed, want failed once", obs.counts)
	}
}
