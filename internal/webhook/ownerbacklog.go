package webhook

import (
	"container/heap"
	"time"
)

// backlog is what ownerSlots knows of each owner's deliveries waiting on this
// replica: those it snoozed (the owner had no free slot) and has not worked
// since, the owner's turns, and how long its tries take.
//
// All owners share one River queue, fetched oldest first, and a fetch takes
// at most the free workers' worth of jobs. A snoozed delivery comes back due,
// so it sorts before every event written after its wait began. The wait was
// only the owner's progress (acquire: a quarter of a second behind an
// endpoint that answers, however slowly), and each waiting delivery of an
// owner over its limit came back about twice a second: a backlog of a
// thousand took the whole fetch capacity in snoozes, and another owner's new
// event waited behind it, longer and longer (found by review: 4.6 s, then 8 s
// … 29.6 s, behind an owner whose endpoint took 1 s with 1,000 events a
// second). Now each waiting delivery gets a turn: the owner's turns follow
// one another by its tries' duration over its limit (the pace its slots
// free at), so its waiting deliveries come back one at a time about as its
// slots free, and the owner costs River's fetches about limit / try duration
// a second; its turns past ownerBacklogMax ahead are parked, at most limit /
// ownerParkSlot a second, so that however large its backlog its returns a
// second stay bounded (before, a wait was bounded instead, and the returns
// grew with the backlog: see ownerBacklogMax). A delivery whose
// turn has come but finds no free slot keeps its place at the head, looking
// again a slot's time later per delivery at the head; up to limit of them
// do, the others go to the back. So the owner's slots are not left idle while
// its backlog waits behind a turn that was missed (with random waits, and
// each refused delivery sent to the back, a limit of 1 kept its slot busy
// half the time), and a pace guessed too fast does not pile up deliveries
// looking again at the head.
//
// Like the slots, this is this replica's scheduling, kept in memory: a
// delivery snoozed here may be fetched by another replica (then it is
// forgotten after its wait and ownerWaitGrace), and no guarantee rests on it;
// the database keeps each event's status, and River runs each job once at a
// time.
type backlog struct {
	waiting map[int64]waiter      // by River job id
	expiry  expiries              // each snooze's end, soonest first (prune); some since forgotten
	pace    map[string]*ownerPace // owners with a delivery in flight or waiting
	pruneAt time.Time             // when pace is next swept of idle owners
}

// waiter is one snoozed delivery.
type waiter struct {
	owner string
	until time.Time // when its snooze ends
	head  bool      // its turn had come: it looks again at the head
}

// ownerPace is one owner's waiting deliveries, turns and recent try duration.
type ownerPace struct {
	waiting int           // in backlog.waiting
	heads   int           // of them, looking again at the head
	next    time.Time     // the owner's last turn given
	took    time.Duration // a moving average of its tries' durations
}

const (
	// ownerBacklogMax is how far ahead an owner's turns follow the pace its
	// slots free at (its tries' duration over its limit). Past it they come
	// ownerParkSlot / limit apart (or a slot's time, when shorter): a
	// backlog too large for its endpoint to work through within 5 minutes
	// is parked, its waiting deliveries coming back limit / ownerParkSlot
	// a second (4 × limit: 100 at the default limit of 25, 4 at a limit of
	// 1), whatever its size; faster only while its slots free faster (an
	// endpoint answering within ownerParkSlot), and then they are mostly
	// admitted, not snoozed again. Before, no delivery waited longer than
	// ownerBacklogMax: the backlog cost backlog / 5 min fetches a second (on
	// average one per 3.75 min each, spread), so that a large one (past
	// about workers / cooldown × 225 s on a replica: 450,000 by default,
	// 8,000 with 2 workers) took every fetch, its due snoozes sorted ahead
	// of every other owner's new events, and those waited minutes (found by
	// review: 2m14s behind 2,827 of its fetches). limit / ownerParkSlot is
	// at most workers / ownerParkSlot, a fifth of what a replica fetches
	// at the default cooldown (50 ms): one owner's parked backlog leaves
	// most of the fetches to others.
	//
	// The cost is its recovery: once its endpoint answers again, the
	// deliveries within ownerBacklogMax come back at the pace its slots
	// freed at when they were snoozed, the parked ones at least limit /
	// ownerParkSlot a second; so a backlog of B has all been looked at
	// within about ownerBacklogMax + B × ownerParkSlot / limit (100,000 at
	// the default limit: 5 + 17 minutes), rather than within
	// ownerBacklogMax. A wait past webhooks.retry_for is no loss: the
	// event is tried when it comes back, and only a try that failed gives
	// up on it — unless its owner's Retry-After pause holds it then, which
	// abandons it unsent (abandonHeld), or it comes back to no free slot
	// when it is lastLook old (abandonBusy). No turn ends after that
	// (capWait): retention may delete the job of an event past the
	// redelivery window, and a turn parked past it found nothing.
	ownerBacklogMax = 5 * time.Minute
	// ownerParkSlot over limit is how far apart the turns of a parked
	// backlog are: the pace of an endpoint that answers in ownerBusyMin.
	ownerParkSlot = ownerBusyMin
	// ownerWaitGrace is how long after its wait a snoozed delivery that has
	// not come back to this replica still counts: then another replica
	// took it, or retention deleted it.
	ownerWaitGrace = time.Minute
	// ownerPruneMax bounds the forgotten deliveries one prune drops, so that
	// the lock every Work takes is held a bounded time (the others are
	// dropped by the next snoozes: each adds one wait to expiry, and drops
	// up to this many).
	ownerPruneMax = 64
)

// snooze is how long a delivery of owner that acquire refused at now, with
// wait, is snoozed; River job id (0: unknown) counts as one of the owner's
// waiting deliveries until it comes back (back) or is forgotten. turned says
// that it comes back from a snooze on this replica (back): its turn has come.
// The wait is at least acquire's. A delivery whose turn has come keeps its
// place at the head while fewer than limit do: it looks again a slot's time
// (the owner's try duration over its limit) after those at the head before
// it; any other gets the owner's next turn, a slot's time after its last one
// (and not before now), or, once the owner's turns are ownerBacklogMax ahead,
// the shorter of a slot's time and ownerParkSlot / limit after it (parked).
// The wait is not bounded: the owner's returns a second are (see
// ownerBacklogMax). The try duration is a moving average of the owner's
// tries, or, when longer, the time since it last made way, at most
// ownerBusyMax (as acquire bounds it; no floor, so that turns behind an
// endpoint that answers fast follow its pace).
//
// The owner's last delivery in flight may end between acquire's refusal and
// snooze (Work takes the lock twice): then the owner has free slots, no
// progress to measure (release forgot when it last made way) and perhaps no
// pace (done dropped it), and the delivery gets acquire's wait, no turn.
// Measured from the zero time, its "time since it made way" was centuries:
// that delivery waited the whole ownerBacklogMax, and the owner's next turn,
// set centuries ahead, was never passed nor dropped (found by review).
func (s *ownerSlots) snooze(owner string, id int64, turned bool, now time.Time, wait time.Duration) time.Duration {
	if s.limit <= 0 {
		return wait
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(now)
	if s.n[owner] == 0 {
		return wait
	}
	p := s.paceOf(owner)
	stalled := min(now.Sub(s.moved[owner]), ownerBusyMax)
	slot := max(p.took, stalled) / time.Duration(s.limit)
	head := turned && p.heads < s.limit
	if head {
		wait = max(wait, slot*time.Duration(p.heads+1))
	} else {
		if p.next.Before(now) {
			p.next = now
		}
		turn := slot
		if p.next.Sub(now) >= ownerBacklogMax {
			turn = min(slot, ownerParkSlot/time.Duration(s.limit))
		}
		p.next = p.next.Add(turn)
		wait = max(wait, p.next.Sub(now))
	}
	s.addWaiter(owner, p, id, now.Add(wait), head)
	return wait
}

// addWaiter counts River job id (0: unknown, not counted), snoozed until
// until, as one of owner's waiting deliveries (p its pace), looking again at
// the head when head. s.mu is held.
func (s *ownerSlots) addWaiter(owner string, p *ownerPace, id int64, until time.Time, head bool) {
	if id == 0 {
		return
	}
	if s.waiting == nil {
		s.waiting = map[int64]waiter{}
	}
	s.forget(id)
	s.waiting[id] = waiter{owner: owner, until: until, head: head}
	heap.Push(&s.expiry, expiry{until: until, id: id})
	p.waiting++
	if head {
		p.heads++
	}
}

// hold is how long a delivery of owner (River job id, 0: unknown) that the
// owner's Retry-After pause holds at now, until until, is snoozed: to the
// owner's next turn, given as snooze gives them but from the pause's end on,
// a slot's time apart (its tries' duration over its limit, not the time since
// it made way: nothing of it is in flight while it is paused; and at least
// ownerParkSlot over limit: the tries that measured its pace may be its 503s,
// answered at once) and parked past ownerBacklogMax. A held delivery was snoozed to the pause's end plus at
// most 30 s instead, outside the turns: the owner's deliveries that came due
// during the pause, its new events included, all came back in that moment,
// sorted ahead of every other owner's new events in River's queue, and took
// every fetch until each had been seen once (found by review: 2,887 fetches,
// 47 s, before another owner's event, in a simulation). Their turns keep the
// owner's returns a second bounded as a parked backlog's are. With no limit
// (no turns), the wait is the pause's, spread (spreadWait).
func (s *ownerSlots) hold(owner string, id int64, now, until time.Time) time.Duration {
	if s.limit <= 0 {
		return spreadWait(until.Sub(now))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(now)
	p := s.paceOf(owner)
	limit := time.Duration(s.limit)
	slot := max(p.took, ownerParkSlot) / limit
	if p.next.Before(until) {
		p.next = until
	}
	turn := slot
	if p.next.Sub(until) >= ownerBacklogMax {
		turn = min(slot, ownerParkSlot/limit)
	}
	p.next = p.next.Add(turn)
	s.addWaiter(owner, p, id, p.next, false)
	return p.next.Sub(now)
}

// admit gives a delivery of owner (River job id, turned as back said) one of
// the owner's slots: end ends its try (done). With no free slot end is nil,
// and wait is how long the delivery is snoozed (its turn, snooze).
func (s *ownerSlots) admit(owner string, id int64, turned bool) (end func(), wait time.Duration) {
	ok, wait := s.acquire(owner, time.Now())
	if !ok {
		return nil, s.snooze(owner, id, turned, time.Now(), wait)
	}
	started := time.Now()
	return func() { s.done(owner, started, time.Now()) }, 0
}

// forget drops River job id from the waiting deliveries. s.mu is held.
func (s *ownerSlots) forget(id int64) (was bool) {
	w, ok := s.waiting[id]
	if !ok {
		return false
	}
	delete(s.waiting, id)
	if p := s.pace[w.owner]; p != nil {
		p.waiting--
		if w.head {
			p.heads--
		}
	}
	return true
}

// back says that River job id is being worked on this replica: it no longer
// waits. It says whether the job comes back from a snooze here.
func (s *ownerSlots) back(id int64) (turned bool) {
	if s.limit <= 0 || id == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forget(id)
}

// done ends at now a try of owner that started when acquire gave it its slot:
// the slot is released and the try's duration kept in the owner's pace.
func (s *ownerSlots) done(owner string, started, now time.Time) {
	if s.limit <= 0 {
		return
	}
	s.release(owner, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.paceOf(owner)
	if took := now.Sub(started); p.took == 0 {
		p.took = took
	} else {
		p.took += (took - p.took) / 4
	}
	s.dropIdle(owner, p, now)
}

// dropIdle forgets owner's pace p when the owner has nothing in flight or
// waiting and no turn ahead. s.mu is held.
func (s *ownerSlots) dropIdle(owner string, p *ownerPace, now time.Time) {
	if p.waiting <= 0 && s.n[owner] == 0 && p.next.Before(now) {
		delete(s.pace, owner)
	}
}

// paceOf is owner's pace, made when missing. s.mu is held.
func (s *ownerSlots) paceOf(owner string) *ownerPace {
	if s.pace == nil {
		s.pace = map[string]*ownerPace{}
	}
	p := s.pace[owner]
	if p == nil {
		p = &ownerPace{}
		s.pace[owner] = p
	}
	return p
}

// prune forgets the snoozed deliveries that have not come back
// ownerWaitGrace after their wait, soonest first and at most ownerPruneMax
// of them (a heap of the waits, not a sweep of every waiting delivery: the
// lock is held a time bounded whatever the backlog), and, at most once a
// second, the pace of owners with nothing in flight or waiting. s.mu is
// held.
func (s *ownerSlots) prune(now time.Time) {
	for range ownerPruneMax {
		if len(s.expiry) == 0 || now.Sub(s.expiry[0].until) <= ownerWaitGrace {
			break
		}
		e := heap.Pop(&s.expiry).(expiry)
		if w, ok := s.waiting[e.id]; ok && w.until.Equal(e.until) {
			s.forget(e.id) // else it came back, or was snoozed again since
		}
	}
	if now.Before(s.pruneAt) {
		return
	}
	s.pruneAt = now.Add(time.Second)
	for owner, p := range s.pace {
		s.dropIdle(owner, p, now)
	}
}

// expiry is the end of one snooze of River job id, in backlog.expiry.
type expiry struct {
	until time.Time
	id    int64
}

// expiries is a min-heap of snoozes' ends (container/heap).
type expiries []expiry

func (h expiries) Len() int           { return len(h) }
func (h expiries) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h expiries) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiries) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiries) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
