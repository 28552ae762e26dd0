package webhook

import (
	"math/rand/v2"
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
// a second, whatever its backlog, up to ownerBacklogMax. A delivery whose
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
	pace    map[string]*ownerPace // owners with a delivery in flight or waiting
	pruneAt time.Time             // when waiting is next swept of the forgotten
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
	// ownerBacklogMax bounds the wait of a waiting delivery. With it an
	// owner's backlog costs at most backlog / 5 min fetches a second (a
	// hung endpoint's 30,000 waiting events: 100 a second); and once its
	// endpoint answers again the whole backlog has been looked at within 5
	// minutes: far inside webhooks.retry_for (24 h at least), and shorter
	// than a failed try's backoff may be (webhooks.backoff_cap, 1 h by
	// default).
	ownerBacklogMax = 5 * time.Minute
	// ownerWaitGrace is how long after its wait a snoozed delivery that has
	// not come back to this replica still counts: then another replica
	// took it, or retention deleted it.
	ownerWaitGrace = time.Minute
)

// snooze is how long a delivery of owner that acquire refused at now, with
// wait, is snoozed; River job id (0: unknown) counts as one of the owner's
// waiting deliveries until it comes back (back) or is forgotten. turned says
// that it comes back from a snooze on this replica (back): its turn has come.
// The wait is at least acquire's. A delivery whose turn has come keeps its
// place at the head while fewer than limit do: it looks again a slot's time
// (the owner's try duration over its limit) after those at the head before
// it; any other gets the owner's next turn, a slot's time after its last one
// (and not before now), up to ownerBacklogMax away (past that, between half
// of it and all of it, spread out). The try duration is a moving average of
// the owner's tries, or, when longer, the time since it last made way, at
// most ownerBusyMax (as acquire bounds it; no floor, so that turns behind an
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
	switch {
	case head:
		wait = max(wait, slot*time.Duration(p.heads+1))
	case p.next.Sub(now) >= ownerBacklogMax-slot:
		wait = max(wait, ownerBacklogMax/2+rand.N(ownerBacklogMax/2))
	default:
		if p.next.Before(now) {
			p.next = now
		}
		if p.next = p.next.Add(slot); p.next.Sub(now) > ownerBacklogMax {
			p.next = now.Add(ownerBacklogMax)
		}
		wait = max(wait, p.next.Sub(now))
	}
	wait = min(wait, ownerBacklogMax)
	if id != 0 {
		if s.waiting == nil {
			s.waiting = map[int64]waiter{}
		}
		s.forget(id)
		s.waiting[id] = waiter{owner: owner, until: now.Add(wait), head: head}
		p.waiting++
		if head {
			p.heads++
		}
	}
	return wait
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

// prune forgets, at most once a second, the snoozed deliveries that have not
// come back ownerWaitGrace after their wait, and the pace of owners with
// nothing in flight or waiting. s.mu is held.
func (s *ownerSlots) prune(now time.Time) {
	if now.Before(s.pruneAt) {
		return
	}
	s.pruneAt = now.Add(time.Second)
	for id, w := range s.waiting {
		if now.Sub(w.until) > ownerWaitGrace {
			s.forget(id)
		}
	}
	for owner, p := range s.pace {
		s.dropIdle(owner, p, now)
	}
}
