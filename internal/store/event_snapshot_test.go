package store_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// jobJSON is the job as an event body carries it.
func jobJSON(j *store.Job) string { return string(j.AppendJSON(nil)) }

func getJob(t *testing.T, st *store.Store, id string) *store.Job {
	t.Helper()
	j, err := st.GetJobAny(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// unknownHedgedJob makes a job of acme whose two attempts (a primary and a
// hedge) both end unknown, so that the job is unknown.
func unknownHedgedJob(t *testing.T, st *store.Store, key string) *store.Job {
	t.Helper()
	ctx := context.Background()
	j, _ := runningJob(t, st, "acme", key)
	hedge, err := st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "q", Role: store.RoleHedge, LeaseOwner: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{j.Attempts[0].ID, hedge.ID} {
		if err := st.FinishAttempt(ctx, id, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := st.SettleJob(ctx, j.ID, ""); err != nil || s != store.JobUnknown {
		t.Fatalf("settle: %s %v", s, err)
	}
	return getJob(t, st, j.ID)
}

// Three events read in one batch: job.unknown of a job resolved since (read
// as recorded: both attempts unknown, no race event, the unknown job's
// version), the job.succeeded that followed (no snapshot: read as it is), and
// a job.failed written before migration 0017 (no snapshot) of a job retried
// since, which keeps being read as the job is at the first try.
func TestEventForDeliveryReadsTheJobAsTheTransitionLeftIt(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	acmeHasWebhook(t, b)

	unknown := unknownHedgedJob(t, b.st, "k1")
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: unknown.ID, Seq: 1, Outcome: "succeeded",
		Result: json.RawMessage(`{"ok":true}`)}); err != nil {
		t.Fatal(err)
	}
	resolved := getJob(t, b.st, unknown.ID)
	if len(resolved.RaceEvents) != 1 || resolved.Attempts[1].State != store.AttemptLost {
		t.Fatalf("the resolution left %d race events, the hedge %s", len(resolved.RaceEvents), resolved.Attempts[1].State)
	}
	evs, err := b.st.JobEvents(ctx, "acme", unknown.ID)
	if err != nil || len(evs) != 2 || evs[0].Type != "job.unknown" || evs[1].Type != "job.succeeded" {
		t.Fatalf("events %+v %v", evs, err)
	}
	if n := count(t, b, `SELECT count(*) FROM job_events WHERE job_id = $1 AND snapshot IS NULL AND type = 'job.succeeded'`, unknown.ID); n != 1 {
		t.Fatalf("the job.succeeded event has a snapshot")
	}

	old, _ := runningJob(t, b.st, "acme", "k2")
	if err := b.st.FinishAttempt(ctx, old.Attempts[0].ID, store.AttemptOutcome{State: store.AttemptFailed}); err != nil {
		t.Fatal(err)
	}
	if s, err := b.st.SettleJob(ctx, old.ID, "failed"); err != nil || s != store.JobFailed {
		t.Fatalf("settle: %s %v", s, err)
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE job_events SET snapshot = NULL WHERE job_id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.st.RetryJob(ctx, "acme", old.ID); err != nil {
		t.Fatal(err)
	}
	retried := getJob(t, b.st, old.ID)
	oldEvs, err := b.st.JobEvents(ctx, "acme", old.ID)
	if err != nil || len(oldEvs) != 1 {
		t.Fatalf("events %+v %v", oldEvs, err)
	}

	ids := []string{evs[0].ID, evs[1].ID, oldEvs[0].ID}
	leading, all := make(chan struct{}), make(chan struct{})
	b.st.SetEventReadHooks(func() {
		close(leading)
		<-all
	}, func(n int) {
		if n == len(ids) {
			close(all)
		}
	})
	jobs := make([]*store.Job, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	read := func(i int) { _, _, jobs[i], errs[i] = b.st.EventForDelivery(ctx, ids[i]) }
	wg.Go(func() { read(0) })
	<-leading
	wg.Go(func() { read(1) })
	wg.Go(func() { read(2) })
	wg.Wait()

	for i, want := range []*store.Job{unknown, resolved, retried} {
		if errs[i] != nil || jobs[i] == nil {
			t.Fatalf("read of event %d: job %v, %v", i, jobs[i], errs[i])
		}
		if got := jobJSON(jobs[i]); got != jobJSON(want) {
			t.Errorf("event %d (%s) reads the job\n%s\nwant\n%s", i, ids[i], got, jobJSON(want))
		}
	}
	if jobs[2].State != store.JobRunning {
		t.Errorf("an event without snapshot reads the job as it is (running), got %s", jobs[2].State)
	}
}
