package webhook

import (
	"testing"
	"time"
)

// prune forgets the snoozed deliveries that never came back (another
// replica took them) without a sweep of every waiting delivery under the
// lock: it pops those whose wait and ownerWaitGrace have passed, soonest
// first, and the queue of waits holds only the snoozes still waiting and those
// of the last ownerWaitGrace or so.
func TestOwnerBacklogPruneForgetsWithoutSweep(t *testing.T) {
	s := &ownerSlots{limit: 1}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if ok, _ := s.acquire("acme", now); !ok {
		t.Fatal("a free slot refused")
	}
	refuse := func(id int64) time.Duration {
		t.Helper()
		ok, w := s.acquire("acme", now)
		if ok {
			t.Fatal("over the limit, admitted")
		}
		return s.snooze("acme", id, s.back(id), now, w)
	}
	// 100 deliveries come back and are snoozed again, many times: the
	// stale waits are dropped as they pass.
	for range 50 {
		for id := range int64(100) {
			refuse(id + 1)
		}
		now = now.Add(30 * time.Second)
	}
	if n := len(s.expiry); n > 100*(1+int(ownerWaitGrace/(30*time.Second))+int(ownerBacklogMax/(30*time.Second))+2) {
		t.Errorf("%d waits queued for 100 waiting deliveries, want stale ones dropped", n)
	}
	// Taken by another replica: none comes back, all are forgotten once
	// their waits and the grace have passed (a few at each snooze).
	now = now.Add(24 * time.Hour)
	for id := range int64(200) {
		refuse(1000 + id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range int64(100) {
		if _, ok := s.waiting[id+1]; ok {
			t.Fatalf("delivery %d, never back, still waiting a day later", id+1)
		}
	}
	if p := s.pace["acme"]; p == nil || p.waiting != 200 || len(s.waiting) != 200 {
		t.Errorf("pace %+v, %d waiting; want only the 200 snoozed last", p, len(s.waiting))
	}
}

// TestOwnerBacklogWaitIsTheOwnersTurn (owner_backlog_internal_test.go) as it
// stands with the owner's returns bounded rather than each wait: a waiting
// owner's deliveries come back about as fast as its slots free: each gets
// the owner's next turn, one slot's time (try duration / limit) after the
// last, up to ownerBacklogMax away, and past it the shorter of that and
// ownerParkSlot / limit (parked: no longer a wait bounded at
// ownerBacklogMax, spread); one whose turn has come but finds no free slot
// looks again a slot's time later, while fewer than limit do, else goes to
// the back; one that never comes back is forgotten, up to ownerPruneMax at
// each snooze.
func TestOwnerBacklogTurnsParkedPastTheBound(t *testing.T) {
	s := &ownerSlots{limit: 2}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 2 {
		if ok, _ := s.acquire("acme", t0); !ok {
			t.Fatal("a free slot refused")
		}
	}
	s.done("acme", t0, t0.Add(time.Second)) // a try takes 1 s: a slot's time is 0.5 s
	if ok, _ := s.acquire("acme", t0.Add(time.Second)); !ok {
		t.Fatal("the slot just freed refused")
	}
	now := t0.Add(time.Second)
	refuse := func(id int64, turned bool) time.Duration {
		t.Helper()
		ok, w := s.acquire("acme", now)
		if ok {
			t.Fatal("over the limit, admitted")
		}
		return s.snooze("acme", id, turned, now, w)
	}
	var wait time.Duration
	for id := range int64(400) {
		wait = refuse(id+1, false)
	}
	if wait < 199*time.Second || wait > 201*time.Second {
		t.Errorf("the 400th waiting delivery waits %s, want its turn, 400 × 0.5 s = 200s", wait)
	}
	// Two whose turns have come look again a slot's time later (at least
	// acquire's wait); the third goes to the back.
	for id := range int64(3) {
		if !s.back(id + 1) {
			t.Fatalf("job %d: not known as snoozed here", id+1)
		}
		wait = refuse(id+1, true)
		if id < 2 && wait > 2*time.Second {
			t.Errorf("head %d waits %s, want a slot's time (or acquire's wait)", id+1, wait)
		}
	}
	if wait < 200*time.Second {
		t.Errorf("the third whose turn came waits %s, want the back (past 200s)", wait)
	}
	// The next 199 turns a slot's time apart reach ownerBacklogMax (300 s);
	// the other 801 are parked ownerParkSlot / limit (0.125 s) apart.
	for id := range int64(1000) {
		wait = refuse(id+1000, false)
	}
	if want := ownerBacklogMax + 801*ownerParkSlot/2; wait < want-time.Second || wait > want+time.Second {
		t.Errorf("the 1,400th waiting delivery waits %s, want about %s: parked past %s", wait, want, ownerBacklogMax)
	}
	if p := s.pace["acme"]; p == nil || p.waiting != 1400 || p.heads != 2 {
		t.Fatalf("pace %+v, want 1400 waiting, 2 at the head", p)
	}
	// Snoozed deliveries that another replica took are forgotten after
	// their wait and ownerWaitGrace, up to ownerPruneMax at each snooze.
	now = now.Add(wait + ownerWaitGrace + time.Second)
	const later = 1400/ownerPruneMax + 1
	for id := range int64(later) {
		refuse(9999+id, false)
	}
	if p := s.pace["acme"]; p == nil || p.waiting != later || p.heads != 0 || len(s.waiting) != later {
		t.Errorf("after the waits passed: %+v, %d waiting; want only the last %d", p, len(s.waiting), later)
	}
}
