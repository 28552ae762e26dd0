package webhook

import (
	"container/heap"
	"testing"
	"time"
)

// pausedStep is simQueue.step with Worker.Work's order of admission: back,
// then the owner's Retry-After pause (a held delivery gets its turn among the
// owner's waiting deliveries from the pause's end: ownerSlots.hold), then the
// slots.
func pausedStep(q *simQueue, p *ownerPauses) {
	q.now = q.now.Add(q.cooldown)
	busy := q.busy[:0]
	for _, t := range q.busy {
		if !t.end.After(q.now) {
			q.slots.done(t.owner, t.start, t.end)
		} else {
			busy = append(busy, t)
		}
	}
	q.busy = busy
	var snoozed []*simJob
	for free := q.workers - len(q.busy); free > 0 && len(q.jobs) > 0 && !q.jobs[0].due.After(q.now); free-- {
		j := heap.Pop(&q.jobs).(*simJob)
		q.fetched[j.owner]++
		turned := q.slots.back(j.id)
		if until, held := p.held(j.owner, q.now); held {
			j.due = q.now.Add(q.slots.hold(j.owner, j.id, q.now, until))
			snoozed = append(snoozed, j)
			continue
		}
		if ok, wait := q.slots.acquire(j.owner, q.now); !ok {
			j.due = q.now.Add(q.slots.snooze(j.owner, j.id, turned, q.now, wait))
			snoozed = append(snoozed, j)
			continue
		}
		q.busy = append(q.busy, simTry{owner: j.owner, start: q.now, end: q.now.Add(q.took[j.owner])})
		q.done[j.id] = true
		q.left[j.owner]--
	}
	for _, j := range snoozed {
		heap.Push(&q.jobs, j)
	}
}

// TestOwnerBacklogDoesNotHoldUpOtherOwners, with one Retry-After in it: the
// slow owner's endpoint answers one try 503 with Retry-After: 600 (a
// ten-minute maintenance window), then answers again in a second. docs/api.md:
// the owner's backlog "comes back at most 4 × webhooks.max_inflight_per_owner a
// second per replica ... however large the backlog. So one owner's backlog
// leaves most of a replica's fetches to other owners, whose events are fetched
// within a few of its fetches", and "other owners' deliveries are not held".
// Every delivery of the owner fetched during the pause was snoozed to the
// pause's end plus at most 30 s, outside the backlog's turns: the whole
// backlog came back in one burst, sorted ahead of every other owner's new
// event in River's queue, and took every fetch for minutes (found by review:
// 2,887 of its fetches, 47 s, before the other owner's event). Now held
// deliveries get the backlog's turns from the pause's end.
func TestRetryAfterPauseDoesNotHoldUpOtherOwners(t *testing.T) {
	const workers, limit = 4, 1
	q := newSimQueue(workers, limit, map[string]time.Duration{"slow": time.Second, "ok": 0})
	var p ownerPauses
	for range 1000 {
		q.add("slow")
	}
	for range 1000 {
		pausedStep(q, &p)
	}
	addSlow := func() {
		for range 20 / int(time.Second/q.cooldown) { // 20 a second: one per step
			q.add("slow")
		}
	}
	// One of the owner's tries is answered 503, Retry-After: 600.
	p.pause("slow", q.now, 10*time.Minute)
	for range int(10 * time.Minute / q.cooldown) {
		addSlow()
		pausedStep(q, &p)
	}
	// The pause is over; the endpoint answers in a second again.
	most := 0
	defer func() { t.Logf("at most %d of the slow owner's fetches before the other owner's event", most) }()
	for round := range 15 {
		id := q.add("ok")
		before, added := q.fetched["slow"], q.now
		for steps := 0; !q.done[id]; steps++ {
			if steps > 100_000 {
				t.Fatalf("round %d: the other owner's event was never fetched", round)
			}
			addSlow()
			pausedStep(q, &p)
		}
		n := q.fetched["slow"] - before
		most = max(most, n)
		if n > 40 {
			t.Fatalf("round %d, after the slow owner's Retry-After pause: its deliveries were fetched %d times before the other owner's event, "+
				"which waited %s (want at most 40 fetches, as without a pause): the held backlog comes back in one burst and crowds other owners out of the shared queue",
				round, n, q.now.Sub(added))
		}
		for range 4 * int(time.Second/q.cooldown) {
			addSlow()
			pausedStep(q, &p)
		}
	}
}

// Held deliveries come back in turns from the pause's end, never before it,
// at most limit / ownerParkSlot a second however fast the owner's tries were
// (its 503s, answered at once), and each counts as one of the owner's
// waiting deliveries.
func TestHeldDeliveriesTakeTurnsFromThePausesEnd(t *testing.T) {
	const limit = 2
	s := &ownerSlots{limit: limit}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if ok, _ := s.acquire("acme", t0); !ok {
		t.Fatal("a free slot refused")
	}
	s.done("acme", t0, t0.Add(time.Millisecond)) // a 503 answered at once
	until := t0.Add(10 * time.Minute)
	last := time.Duration(0)
	for i := range 100 {
		wait := s.hold("acme", int64(i+1), t0, until)
		if wait <= until.Sub(t0) {
			t.Fatalf("held delivery %d waits %s, want past the pause's end (%s)", i, wait, until.Sub(t0))
		}
		if i > 0 && wait-last < ownerParkSlot/limit {
			t.Fatalf("held delivery %d comes back %s after the one before, want at least %s", i, wait-last, ownerParkSlot/limit)
		}
		last = wait
	}
	if p := s.pace["acme"]; p == nil || p.waiting != 100 {
		t.Fatalf("owner's pace %+v, want 100 waiting", p)
	}
}
