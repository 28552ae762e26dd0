package store

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// The hand-overs of lost claims whose key rows stay held past their first
// budget wait one at a time (inHeldKeyTurn): each try holds a pool
// connection while it waits on the row, and a network cut in the middle of
// a claim batch leaves a whole batch's keys held for hours — many
// hand-overs retrying at once would take the pool from the jobs.
func TestHeldKeyHandOversTakeTurns(t *testing.T) {
	s := New(nil, Options{})
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.inHeldKeyTurn(context.Background(), func() error {
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				for range 100 {
					runtime.Gosched() // let the others in, were the turn not held
				}
				inside.Add(-1)
				return nil
			})
		}()
	}
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Fatalf("%d hand-overs waited on held key rows at once, each holding a pool connection; want one at a time", m)
	}
}
