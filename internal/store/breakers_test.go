package store_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

func TestBreakerStatesUpsertListAndAgeOut(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	err := b.st.UpsertBreakerStates(ctx, "r1", []store.BreakerState{
		{Provider: "p1", State: "open", Requests: 5, Failures: 5, ConsecutiveFailures: 5, SinceChange: 10 * time.Second},
		{Provider: "p2", State: "closed", Requests: 3, Successes: 3, ConsecutiveSuccesses: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.UpsertBreakerStates(ctx, "r2", []store.BreakerState{{Provider: "p1", State: "closed"}}); err != nil {
		t.Fatal(err)
	}
	list, err := b.st.ListBreakerStates(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].Provider != "p1" || list[0].Replica != "r1" || list[1].Replica != "r2" || list[2].Provider != "p2" {
		t.Fatalf("list %+v", list)
	}
	open := list[0]
	if open.State != "open" || open.Failures != 5 || open.ConsecutiveFailures != 5 {
		t.Fatalf("row %+v", open)
	}
	// changed_at is on the database clock: 10s before updated_at.
	if d := open.UpdatedAt.Sub(open.ChangedAt); d < 9*time.Second || d > 11*time.Second {
		t.Fatalf("changed_at %v is %v before updated_at %v, want 10s", open.ChangedAt, d, open.UpdatedAt)
	}

	// A second publication with the same state keeps changed_at; a new state
	// moves it.
	if err := b.st.UpsertBreakerStates(ctx, "r1", []store.BreakerState{{Provider: "p1", State: "open", SinceChange: 0}}); err != nil {
		t.Fatal(err)
	}
	list, _ = b.st.ListBreakerStates(ctx, time.Minute)
	if !list[0].ChangedAt.Equal(open.ChangedAt) {
		t.Fatalf("changed_at moved without a state change: %v -> %v", open.ChangedAt, list[0].ChangedAt)
	}
	if err := b.st.UpsertBreakerStates(ctx, "r1", []store.BreakerState{{Provider: "p1", State: "half-open"}}); err != nil {
		t.Fatal(err)
	}
	list, _ = b.st.ListBreakerStates(ctx, time.Minute)
	if list[0].State != "half-open" || !list[0].ChangedAt.After(open.ChangedAt) {
		t.Fatalf("after change: %+v", list[0])
	}

	// r2 stops publishing: once its rows are older than the bound (on the
	// database clock) they are not listed, and pruning deletes them.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE breaker_states SET updated_at = now() - interval '2 minutes' WHERE replica = 'r2'`); err != nil {
		t.Fatal(err)
	}
	list, _ = b.st.ListBreakerStates(ctx, time.Minute)
	for _, r := range list {
		if r.Replica == "r2" {
			t.Fatalf("stale replica listed: %+v", r)
		}
	}
	if n, err := b.st.PruneBreakerStates(ctx, 90*time.Second); err != nil || n != 1 {
		t.Fatalf("prune: n=%d err=%v", n, err)
	}
	if err := b.st.DeleteBreakerStates(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM breaker_states`); n != 0 {
		t.Fatalf("%d rows left", n)
	}
}

func TestProviderStats(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	job, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "stats", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	finish := func(provider, state string, fault string, latency int64) {
		t.Helper()
		a := startAttempt(t, b, job.ID, provider, store.RolePrimary)
		var detail any
		if fault != "" {
			detail = map[string]any{"kind": "x", "fault": fault}
		}
		if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: state, Error: detail, LatencyMS: latency}); err != nil {
			t.Fatal(err)
		}
	}
	// p1: two answers (lost, 100ms and 300ms), a caller error (counts as the
	// provider's success), a provider failure, an invalid output (200ms), a
	// cancellation (no verdict).
	finish("p1", store.AttemptLost, "", 100)
	finish("p1", store.AttemptLost, "", 300)
	finish("p1", store.AttemptFailed, "caller", 5)
	finish("p1", store.AttemptFailed, "provider", 7)
	finish("p1", store.AttemptInvalid, "provider", 200)
	finish("p1", store.AttemptCancelled, "", 50)
	finish("p2", store.AttemptFailed, "network", 1)
	for ms := int64(10); ms <= 70; ms += 10 {
		finish("p4", store.AttemptLost, "", ms)
	}

	stats, err := b.st.ProviderStats(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p1 := stats["p1"]
	if p1.Attempts != 5 || p1.Succeeded != 3 || p1.Failed != 2 || p1.Lost != 2 || p1.Cancelled != 1 {
		t.Fatalf("p1 %+v", p1)
	}
	if p1.SuccessRate == nil || math.Abs(*p1.SuccessRate-0.6) > 1e-9 {
		t.Fatalf("success rate %v", p1.SuccessRate)
	}
	if p1.P50MS == nil || *p1.P50MS != 200 || p1.P99MS == nil || *p1.P99MS < 290 || *p1.P99MS > 300 {
		t.Fatalf("percentiles p50=%v p99=%v", p1.P50MS, p1.P99MS)
	}
	// Interpolated percentiles come to a tenth of a millisecond, without the
	// float noise of percentile_cont (69.39999999999999 for 69.4).
	if p4 := stats["p4"]; p4.P95MS == nil || *p4.P95MS != 67 || *p4.P99MS != 69.4 {
		t.Fatalf("p4 percentiles p95=%v p99=%v, want 67 and 69.4", *p4.P95MS, *p4.P99MS)
	}
	p2 := stats["p2"]
	if p2.Failed != 1 || p2.SuccessRate == nil || *p2.SuccessRate != 0 || p2.P50MS != nil {
		t.Fatalf("p2 %+v", p2)
	}
	if _, ok := stats["p3"]; ok {
		t.Fatal("p3 has no attempts")
	}
	// Outside the window: nothing.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET created_at = now() - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}
	if stats, _ = b.st.ProviderStats(ctx, time.Hour); len(stats) != 0 {
		t.Fatalf("stats outside the window: %+v", stats)
	}
}

func TestRecentJobsAndCounters(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	var ids []string
	for _, k := range []string{"a", "b", "c"} {
		j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", k, `{}`))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	a := startAttempt(t, b, ids[2], "p1", store.RolePrimary)
	h := startAttempt(t, b, ids[2], "p2", store.RoleHedge)
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptLost}); err != nil {
		t.Fatal(err)
	}
	jobs, err := b.st.RecentJobs(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		t.Fatalf("%d jobs", len(jobs))
	}
	// Same-transaction timestamps may tie; the attempts are on the newest job.
	var withAttempts *store.Job
	for _, j := range jobs {
		if j.ID == ids[2] {
			withAttempts = j
		}
	}
	if withAttempts == nil || len(withAttempts.Attempts) != 2 || withAttempts.Attempts[1].ID != h.ID {
		t.Fatalf("recent jobs %+v", jobs)
	}
	c, err := b.st.RecentCounters(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if c.JobsByState[store.JobPending]+c.JobsByState[store.JobRunning] != 3 || c.RacesLost != 1 || c.HedgesStarted != 1 || c.HedgesWon != 0 {
		t.Fatalf("counters %+v", c)
	}
}
