package metrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// recoveryBundle is a race engine whose only target cannot look attempts up
// (an OpenAI-compatible adapter without lookup), so that recovery leaves an
// unknown attempt unknown instead of reconciling it, counted by m.
func recoveryBundle(t *testing.T, m *metrics.Metrics) *racetest.Bundle {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	t.Cleanup(srv.Close)
	oa, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "primary", BaseURL: srv.URL, Model: "m", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return racetest.New(t, racetest.Options{Observer: m, Providers: []racetest.Provider{{Name: "primary", Adapter: oa}}})
}

// runningAttempt creates a running attempt of job for leaseOwner (a replica
// about to die), its lease live for an hour.
func runningAttempt(t *testing.T, rb *racetest.Bundle, jobID, leaseOwner string) *store.Attempt {
	t.Helper()
	ctx := context.Background()
	a, err := rb.Store.CreateAttempt(ctx, store.NewAttempt{JobID: jobID, Provider: "primary", Role: store.RolePrimary,
		LeaseOwner: leaseOwner, LeaseFor: time.Hour, MaxInflight: 2, MaxAttempts: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Store.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	return a
}

// expire ends the leases of the given rows of table now.
func expire(t *testing.T, rb *racetest.Bundle, table string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := rb.DB.Pool.Exec(context.Background(),
			`UPDATE `+table+` SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
}

// When a replica dies mid-call, the recovery leader expires its attempt's
// lease and settles the job unknown (store.ExpireAttemptLeases). The dead
// replica cannot count that, and recovery did not either: only its log line
// named the job, so router_jobs_settled_total{state="unknown"}, which
// docs/operations.md says to alert on, never rose for the commonest way a job
// becomes unknown. Found by review.
func TestRecoveryCountsAJobSettledUnknown(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	rb := recoveryBundle(t, m)
	job := rb.Create(t, "dead-process")
	a := runningAttempt(t, rb, job.ID, "dead-process")
	expire(t, rb, "attempts", a.ID)
	expire(t, rb, "jobs", job.ID)
	rb.Runner.RecoverOnce(context.Background(), 10)
	if j := rb.WaitSettled(t, job.ID); j.State != store.JobUnknown {
		t.Fatalf("job %s, want unknown", j.State)
	}
	if got := counterValue(t, m, "router_jobs_settled_total", map[string]string{"state": "unknown"}); got != 1 {
		t.Errorf("router_jobs_settled_total{state=unknown} = %v after recovery settled a job unknown, want 1", got)
	}
	// A later pass finds nothing more to expire: the job is not counted again.
	rb.Runner.RecoverOnce(context.Background(), 10)
	if got := counterValue(t, m, "router_jobs_settled_total", map[string]string{"state": "unknown"}); got != 1 {
		t.Errorf("router_jobs_settled_total{state=unknown} = %v after a second recovery pass, want still 1", got)
	}
}

// A dead replica's attempts of one job can expire in different passes (a hedge
// created after its last lease renewal expires later). The first expiry makes
// an attempt unknown but cannot settle the job, which still has one in flight;
// the pass that expires the last one settles it. The store names the job both
// times: recovery counts it once, when it settled. Found by review.
func TestRecoveryCountsAJobSettledUnknownOnceOverTwoPasses(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	rb := recoveryBundle(t, m)
	job := rb.Create(t, "dead-process")
	first := runningAttempt(t, rb, job.ID, "dead-process")
	hedge := runningAttempt(t, rb, job.ID, "dead-process")
	expire(t, rb, "jobs", job.ID)
	expire(t, rb, "attempts", first.ID)
	rb.Runner.RecoverOnce(context.Background(), 10)
	if j := rb.Job(t, job.ID); j.State != store.JobRunning {
		t.Fatalf("precondition: job %s after its first attempt expired, want running (its hedge is in flight)", j.State)
	}
	if got := counterValue(t, m, "router_jobs_settled_total", map[string]string{"state": "unknown"}); got != 0 {
		t.Errorf("router_jobs_settled_total{state=unknown} = %v while the job is still running, want 0", got)
	}
	expire(t, rb, "attempts", hedge.ID)
	rb.Runner.RecoverOnce(context.Background(), 10)
	if j := rb.Job(t, job.ID); j.State != store.JobUnknown {
		t.Fatalf("precondition: job %s after its hedge expired too, want unknown", j.State)
	}
	if got := counterValue(t, m, "router_jobs_settled_total", map[string]string{"state": "unknown"}); got != 1 {
		t.Errorf("router_jobs_settled_total{state=unknown} = %v after recovery settled the job unknown, want 1", got)
	}
}
