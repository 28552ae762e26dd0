package webhook

import (
	"testing"
	"time"
)

// A delivery whose owner has no free slot waits as long as the owner's
// deliveries have gone without making way (bounded, jittered up to twice):
// behind an endpoint that answers it looks again within a fraction of a
// second; behind one that has answered nothing for 20 s it waits 20–40 s,
// not 1–2 s, so a hung endpoint's backlog does not cost a read and an
// update per waiting event every second. Found by review.
func TestOwnerBusyWaitFollowsTheOwnersProgress(t *testing.T) {
	s := &ownerSlots{limit: 2}
	t0 := time.Now()
	for range 2 {
		if ok, _ := s.acquire("acme", t0); !ok {
			t.Fatal("a free slot refused")
		}
	}
	between := func(at time.Time, lo, hi time.Duration) {
		t.Helper()
		ok, wait := s.acquire("acme", at)
		if ok || wait < lo || wait >= hi {
			t.Errorf("at +%s: ok %t, wait %s; want a refusal waiting [%s, %s)", at.Sub(t0), ok, wait, lo, hi)
		}
	}
	between(t0.Add(100*time.Millisecond), ownerBusyMin, 2*ownerBusyMin) // just started: the minimum
	between(t0.Add(20*time.Second), 20*time.Second, 40*time.Second)     // nothing ended for 20 s
	between(t0.Add(10*time.Minute), ownerBusyMax, 2*ownerBusyMax)       // bounded
	s.release("acme", t0.Add(10*time.Minute))                           // one ended: the owner moves
	if ok, _ := s.acquire("acme", t0.Add(10*time.Minute)); !ok {
		t.Fatal("the slot just freed refused")
	}
	between(t0.Add(10*time.Minute+50*time.Millisecond), ownerBusyMin, 2*ownerBusyMin)
	// Another owner is not held up by acme's slots.
	if ok, _ := s.acquire("globex", t0); !ok {
		t.Error("another owner refused")
	}
}
