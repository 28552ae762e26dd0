package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// Two wins carried by one batch whose commit's answer was lost are each run
// again alone and find themselves won (lateWin); River is woken for the
// events the lost batch wrote, as for a lone win whose answer was lost.
// Before, only a batch of one woke it, and the events waited for River's next
// periodic fetch.
func TestBatchedWinsWhoseAnswerWasLostWakeRiver(t *testing.T) {
	b := setup(t)
	acmeHasWebhook(t, b)
	st, d := droppingStore(t, b)
	_, c1 := runningJob(t, st, "acme", "lost-win-1")
	_, c2 := runningJob(t, st, "acme", "lost-win-2")
	queued := make(chan struct{})
	var once sync.Once
	st.SetOnQueued(func(n int) {
		if n >= 2 {
			once.Do(func() { close(queued) })
		}
	})
	st.SetBeforeSelfBatch(func() { <-queued }) // both wins in one statement
	before := st.RiverWakesAsked()
	d.armed.Store(true)
	var wg sync.WaitGroup
	won, errs := make([]bool, 2), make([]error, 2)
	for i, c := range []store.Completion{c1, c2} {
		wg.Go(func() { won[i], errs[i] = st.Complete(context.Background(), c) })
	}
	wg.Wait()
	select {
	case <-d.dropped:
	default:
		t.Fatal("no answer was dropped: the test did not inject its failure")
	}
	for i := range won {
		if errs[i] != nil || !won[i] {
			t.Fatalf("win %d: won=%v err=%v", i, won[i], errs[i])
		}
	}
	if n := count(t, b, `SELECT count(*) FROM job_events WHERE type = 'job.succeeded'`); n != 2 {
		t.Fatalf("job.succeeded events %d, want 2", n)
	}
	if n := st.RiverWakesAsked() - before; n < 1 {
		t.Fatalf("River wakes asked after a batch of wins whose answer was lost: %d, want at least 1", n)
	}
}
