package store_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// claimWaits is an Observer that records the claims' commit waits.
type claimWaits struct {
	mu     sync.Mutex
	claims []time.Duration
}

func (*claimWaits) DurableCommit()    {}
func (*claimWaits) Batch(string, int) {}
func (w *claimWaits) CommitWait(kind string, d time.Duration) {
	if kind != "claim" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.claims = append(w.claims, d)
}

// manualClock is a clock that moves only when told.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// router_db_commit_wait_seconds{path="claim"} times only the try of a claim
// that committed, as a win's: a try that failed, and was run again, is not
// part of it (nor reported on its own: a failed batch is not a commit wait).
// The claim's first try here shares its batch with another request for the
// same key, one whose input the database refuses: that claim fails, so the
// batch leaves this one's outcome unknown (errClaimNotRun) and CreateJob
// runs it again, alone, and it commits. The clock moves only in the batches:
// the failed try took an hour, the committed one three seconds.
func TestClaimCommitWaitTimesOnlyTheTryThatCommitted(t *testing.T) {
	obs := &claimWaits{}
	db := testdb.New(t, store.Options{Observer: obs})
	st := db.Store
	clock := &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	t.Cleanup(store.SetCommitClock(clock.Now))

	const failedTook, committedTook = time.Hour, 3 * time.Second
	nj := newJob(t, "acme", "triage", "wait", `{"k":"wait"}`)
	nj.Params = json.RawMessage(`{}`)
	refused := nj
	refused.Input, refused.Fingerprint = json.RawMessage(`{"not json`), []byte("another request")

	var batches atomic.Int32
	st.SetBeforePathBatch(func() []store.NewJob {
		if batches.Add(1) == 1 {
			// The refused request comes first, so its claim goes out for the key.
			clock.advance(failedTook)
			return []store.NewJob{refused}
		}
		clock.advance(committedTook)
		return nil
	})

	j, created, err := st.CreateJob(context.Background(), nj)
	if err != nil || !created {
		t.Fatalf("claim: created=%v err=%v", created, err)
	}
	if n := batches.Load(); n != 2 {
		t.Fatalf("the claim went out in %d batches, want 2 (a failed try, then the one that committed): the test did not set up its case", n)
	}
	var state string
	if err := db.Pool.QueryRow(context.Background(), `SELECT state FROM jobs WHERE id = $1`, j.ID).Scan(&state); err != nil {
		t.Fatalf("the claim's job is not stored: %v", err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.claims) != 1 || obs.claims[0] != committedTook {
		t.Fatalf("claim commit waits told: %v, want only the committed try's [%v]", obs.claims, committedTook)
	}
}
