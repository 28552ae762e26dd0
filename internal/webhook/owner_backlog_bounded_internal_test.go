package webhook

import (
	"testing"
	"time"
)

// The reviewer's case (docs/api.md: "however large one owner's backlog
// grows, other owners' events are fetched within a few of its fetches"):
// TestOwnerBacklogDoesNotHoldUpOtherOwners's queue, but the slow owner's
// backlog is large for the replica, 8,000 waiting, none arriving. When the
// wait of a waiting delivery was bounded (5 minutes), each came back at least
// that often: the backlog alone asked for ~8,000 / 225 s ≈ 35 fetches a
// second, more than this replica's free worker fetches (1 per 50 ms cooldown
// = 20 a second); the due snoozes piled up ahead of every new event of
// another owner, which waited 2m14s behind 2,827 of the slow owner's
// fetches. Now the owner's returns a second are bounded whatever its
// backlog. Counted in fetches on a simulated clock, not timed.
func TestOwnerLargeBacklogDoesNotHoldUpOtherOwners(t *testing.T) {
	q := newSimQueue(2, 1, map[string]time.Duration{"slow": time.Second, "ok": 0})
	for range 8000 {
		q.add("slow")
	}
	q.steps(10 * time.Minute) // every waiting delivery fetched and snoozed, some back
	for round := range 3 {
		id := q.add("ok")
		start, before := q.now, q.fetched["slow"]
		for !q.done[id] {
			if q.now.Sub(start) > 10*time.Minute {
				t.Fatalf("round %d: the other owner's event not fetched within 10 minutes (%d of the slow owner's fetches meanwhile)",
					round, q.fetched["slow"]-before)
			}
			q.step()
		}
		n := q.fetched["slow"] - before
		t.Logf("round %d: the other owner's event waited %s behind %d of the slow owner's fetches", round, q.now.Sub(start), n)
		if n > 40 {
			t.Errorf("round %d: %d of the slow owner's fetches (%s) before the other owner's event, want at most 40", round, n, q.now.Sub(start))
		}
		q.steps(4 * time.Minute)
	}
}

// An owner's waiting deliveries cost River's fetches a bounded rate whatever
// the backlog: behind an endpoint that answers in 10 s (one slot, so a slot's
// time is 10 s), 1,000, 10,000 and 50,000 waiting deliveries are fetched, once
// all have been looked at, at most limit / ownerBusyMin (4) a second beyond
// the turns its slot frees (0.1 a second) and the one looking again at the
// head. Before, 50,000 came back at least every 5 minutes: 167 a second.
func TestOwnerBacklogReturnsAreBounded(t *testing.T) {
	for _, backlog := range []int{1000, 10_000, 50_000} {
		q := newSimQueue(100, 1, map[string]time.Duration{"slow": 10 * time.Second})
		for range backlog {
			q.add("slow")
		}
		q.steps(15 * time.Minute) // every one looked at (up to 1,980 a second), turns settled
		before := q.fetched["slow"]
		const window = 10 * time.Minute
		q.steps(window)
		rate := float64(q.fetched["slow"]-before) / window.Seconds()
		t.Logf("backlog %d: %.2f of the slow owner's fetches a second", backlog, rate)
		if bound := 4 + 0.1 + 1; rate > bound+0.5 {
			t.Errorf("backlog %d: %.2f fetches a second, want at most about %.1f whatever the backlog", backlog, rate, bound)
		}
	}
}

// Once its endpoint answers again a backlog still drains: the deliveries
// parked beyond ownerBacklogMax come back at least limit / ownerBusyMin a
// second (here, limit 2: 8 a second), those within it as the owner's slots
// freed when they were snoozed. 20,000 waiting behind an endpoint that hung
// (each try 10 s) for 15 minutes, then answers in 50 ms: delivered within
// ownerBacklogMax + 20,000 / 8 s (2,800 s), not at the hung pace (20,000 ×
// 5 s, 28 hours).
func TestOwnerBacklogDrainsAfterRecovery(t *testing.T) {
	const limit = 2
	q := newSimQueue(100, limit, map[string]time.Duration{"slow": 10 * time.Second})
	for range 20_000 {
		q.add("slow")
	}
	q.steps(15 * time.Minute)
	q.took["slow"] = 50 * time.Millisecond
	start, left := q.now, q.left["slow"]
	bound := ownerBacklogMax + time.Duration(left)*ownerBusyMin/limit
	for q.left["slow"] > 0 {
		if q.now.Sub(start) > 2*bound {
			t.Fatalf("%d of %d left %s after the endpoint recovered", q.left["slow"], left, q.now.Sub(start))
		}
		q.step()
	}
	took := q.now.Sub(start)
	t.Logf("%d waiting delivered %s after the endpoint recovered (bound %s), %d fetches in all", left, took, bound, q.fetched["slow"])
	if took > bound {
		t.Errorf("the backlog of %d took %s to drain, want at most %s", left, took, bound)
	}
}

// prune, under the lock every Work takes, does work bounded whatever the
// backlog: 20,000 waiting deliveries that another replica took (none comes
// back) are forgotten a few at each later snooze, not in one sweep of them
// all; before, each prune (once a second) walked every waiting delivery.
func TestOwnerBacklogPruneIsBounded(t *testing.T) {
	s := &ownerSlots{limit: 1}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if ok, _ := s.acquire("acme", now); !ok {
		t.Fatal("a free slot refused")
	}
	refuse := func(id int64) {
		t.Helper()
		ok, w := s.acquire("acme", now)
		if ok {
			t.Fatal("over the limit, admitted")
		}
		s.snooze("acme", id, false, now, w)
	}
	const backlog = 20_000
	for id := range int64(backlog) {
		refuse(id + 1)
	}
	now = now.Add(30 * 24 * time.Hour) // every wait and its grace long past
	refuse(backlog + 1)
	if n := len(s.waiting); n < backlog-100 {
		t.Errorf("one snooze forgot %d waiting deliveries at once, want at most 100: the lock held for a sweep of the backlog", backlog+1-n)
	}
	for id := range int64(backlog) {
		refuse(backlog + 2 + id)
	}
	for id := range int64(backlog) {
		if _, ok := s.waiting[id+1]; ok {
			t.Fatalf("delivery %d, never back, not forgotten after %d more snoozes", id+1, backlog)
		}
	}
}
