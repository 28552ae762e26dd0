package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The look-ups of a key whose row another transaction keeps (an operator's
// open transaction, a replica cut off mid-claim), resent at will by clients
// (503 busy, Retry-After: 1), are bounded to the claims' alone turns: each
// holds a pool connection while it waits, and unbounded they took every
// connection of the pool (aloneTurns). A first try that waited the
// batches' 100 ms with no turn held a connection per look-up with no bound:
// enough resends held the whole pool, and another owner's claims queued
// behind them (found in review). Now a key found held is looked up alone at
// once, with no first try, while it is remembered (heldKeys).
func TestHeldKeyLookupsStayWithinAloneTurns(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	pool, st := modeStore(t, b, "cache_statement", 4)
	turns := st.AloneTurns()
	tx := inFlightKeyClaim(t, b, "0190bbbb-0000-7000-8000-0000000000aa", "held")
	defer func() { _ = tx.Rollback(ctx) }()

	// One look-up finds the key held (busy after its alone wait).
	if _, err := st.AwaitKeyHeld(ctx, "acme", "triage", "held"); err == nil {
		t.Fatal("a look-up of a key another transaction holds answered; want busy")
	}

	// Then its clients resend at will: once 40 look-ups have found every
	// turn taken, the storm is on.
	var waits atomic.Int32
	storm := make(chan struct{})
	var once sync.Once
	st.SetOnAloneTurnWait(func() {
		if waits.Add(1) >= 40 {
			once.Do(func() { close(storm) })
		}
	})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = st.AwaitKeyHeld(ctx, "acme", "triage", "held") // busy: resent at once
			}
		}()
	}
	var maxAcquired atomic.Int32
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if n := pool.Stat().AcquiredConns(); n > maxAcquired.Load() {
				maxAcquired.Store(n)
			}
		}
	}()
	<-storm
	for i := range 10 {
		if _, _, err := st.CreateJob(ctx, newJob(t, "beta", "triage", "beta-"+string(rune('a'+i)), `{"k":"`+string(rune('a'+i))+`"}`)); err != nil {
			t.Errorf("another owner's claim during the storm: %v", err)
		}
	}
	close(stop)
	wg.Wait()
	<-sampled
	t.Logf("pool of 4, %d alone turns: look-ups of one held key held up to %d connections at once", turns, maxAcquired.Load())
	if int(maxAcquired.Load()) > turns+1 { // +1: the other owner's claim
		t.Errorf("look-ups of a held key held %d of the pool's 4 connections at once, past the %d alone turn(s) that bound them", maxAcquired.Load(), turns)
	}
}
