package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A lost claim whose caller sent no key is failed by the store's background
// hand-over (settleLostClaim): no run of the job ends it, so none counted it,
// and router_jobs_settled_total missed it — while a keyed one is run by
// recovery and counted when that run ends. The hand-over tells the runner
// (race.New installs its Observer), which counts it `failed`, once; a keyed
// one is not counted by the hand-over (its run counts it). Found by review.
func TestLostClaimFailedByTheHandOverIsCounted(t *testing.T) {
	for _, c := range []struct {
		name           string
		unkeyed, first bool
	}{
		{"unkeyed", true, true},
		{"unkeyed without a first attempt", true, false},
		{"keyed", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			st, d, down := outageStore(t, b)
			m := metrics.New(metrics.Options{NoProcessCollectors: true})
			race.New(race.Config{Store: st, Observer: m}) // as the server wires them: the runner counts
			handedOver := make(chan error, 1)
			st.SetOnLostClaim(func(err error) { handedOver <- err })
			nj := newJob(t, "acme", "triage", "outage", `{"n":1}`)
			nj.LeaseOwner, nj.LeaseFor, nj.Unkeyed = "replica-a", time.Minute, c.unkeyed
			if c.first {
				nj.First = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}
			}
			d.onDrop = func() { down.Store(true) } // the database goes away right after the commit, before the claim is tried again
			d.armed.Store(true)
			if _, _, err := st.CreateJob(ctx, nj); err == nil {
				t.Fatal("CreateJob succeeded: the outage did not outlast its retries, and the test shows nothing")
			}
			down.Store(false)
			awaitHandOver(t, handedOver) // the hand-over has ended: whatever it counts has been counted
			want, state := 0, "running or pending"
			if c.unkeyed {
				want, state = 1, store.JobFailed
			}
			if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'outage' AND state = ANY($1)`,
				map[bool][]string{true: {store.JobFailed}, false: {store.JobPending, store.JobRunning}}[c.unkeyed]); n != 1 {
				t.Fatalf("precondition: the committed job is not %s after the hand-over", state)
			}
			if got := settledCount(t, m, store.JobFailed); got != float64(want) {
				t.Errorf("router_jobs_settled_total{state=\"failed\"} = %v after the hand-over, want %d", got, want)
			}
			for _, s := range []string{store.JobSucceeded, store.JobUnknown, store.JobCancelled} {
				if got := settledCount(t, m, s); got != 0 {
					t.Errorf("router_jobs_settled_total{state=%q} = %v, want 0", s, got)
				}
			}
		})
	}
}

// settledCount is router_jobs_settled_total{state=state} in m's registry.
func settledCount(t *testing.T, m *metrics.Metrics, state string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "router_jobs_settled_total" {
			continue
		}
		for _, metric := range mf.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "state" && l.GetValue() == state {
					return metric.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("router_jobs_settled_total{state=%q} not exposed", state)
	return 0
}
