package race

import (
	"testing"
	"time"
)

// The hedge budget wakes one denied job per slot that may have been freed,
// oldest first; a wake its job did not act on (the job ended holding it) goes
// to the next waiting job; nothing wakes while no slot is free.
func TestHedgeBudgetWakesOneWaitingJobPerFreedSlot(t *testing.T) {
	var b hedgeBudgets
	route := &Route{HedgeBudgetMin: 1}
	done := []func(){b.jobStarted("r"), b.jobStarted("r"), b.jobStarted("r")}
	defer func() {
		for _, d := range done {
			d()
		}
	}()
	rel, ok, _ := b.acquire("r", route)
	if !ok {
		t.Fatal("the first hedge was denied")
	}
	w1, w2 := make(chan struct{}, 1), make(chan struct{}, 1)
	for _, w := range []chan struct{}{w1, w2} {
		if _, ok, _ := b.acquireOrWait("r", route, w); ok {
			t.Fatal("a second hedge was granted by a budget of one")
		}
	}
	woken := func(w chan struct{}) bool {
		select {
		case <-w:
			return true
		default:
			return false
		}
	}
	if woken(w1) || woken(w2) {
		t.Fatal("a waiting job was woken while no slot was free")
	}
	rel()
	if !woken(w1) || woken(w2) {
		t.Fatal("the slot given back did not wake the oldest waiting job alone")
	}
	// w1's job takes no slot (its attempt answered) and passes the wake on.
	b.passOn("r")
	if !woken(w2) {
		t.Fatal("a wake passed on did not reach the next waiting job")
	}

	// A job ending with a wake it did not take passes it on; one ending
	// while still waiting just leaves.
	rel, _, _ = b.acquire("r", route)
	b.acquireOrWait("r", route, w1)
	b.acquireOrWait("r", route, w2)
	rel()
	b.forget("r", w1) // signalled, never read: passed on to w2
	if !woken(w2) {
		t.Fatal("the wake of a job that ended was not passed on")
	}
	rel, _, _ = b.acquire("r", route)
	b.acquireOrWait("r", route, w1)
	b.forget("r", w1)
	rel()
	if woken(w1) {
		t.Fatal("a job that stopped waiting was woken")
	}
}

// A hedge tried again after a denial, or after a start that failed, is due no
// later than three quarters of its attempt's first-byte budget from the
// attempt's start while that point is ahead — the latest an adaptive or a
// clamped fixed hedge is due (hedgeDelay) — not a whole hedge delay later,
// when the attempt would be `unknown` already (found in review).
func TestHedgeTriedAgainBeforeTheFirstByteDeadline(t *testing.T) {
	o := &orchestrator{
		r:     &Runner{cfg: Config{Targets: map[string]*Target{"a": {Timeout: 4 * time.Second}}}},
		route: &Route{HedgeAfter: 2 * time.Second},
	}
	now := time.Now()
	f := &flight{target: "a", start: now.Add(-2 * time.Second)}
	o.hedgeAgain(f, now)
	if want := f.start.Add(3 * time.Second); !f.due.Equal(want) {
		t.Fatalf("tried again %s after the attempt's start, want %s (3/4 of its 4s first-byte budget)", f.due.Sub(f.start), want.Sub(f.start))
	}
	// Past that point, a hedge delay from now, as before.
	f = &flight{target: "a", start: now.Add(-3500 * time.Millisecond)}
	o.hedgeAgain(f, now)
	if want := now.Add(2 * time.Second); !f.due.Equal(want) {
		t.Fatalf("tried again %s from now, want a hedge delay (2s)", f.due.Sub(now))
	}
}
