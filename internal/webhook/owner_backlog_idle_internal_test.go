package webhook

import (
	"sync"
	"testing"
	"time"
)

// nextTurnAhead is how far past now owner's next turn is (0: no pace).
func nextTurnAhead(s *ownerSlots, owner string, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pace[owner]; p != nil {
		return p.next.Sub(now)
	}
	return 0
}

// The reviewer's case: Work's acquire refuses, then the owner's deliveries
// in flight all end before its snooze (two locks, one after the other). The
// owner has free slots and no progress to measure: the delivery gets
// acquire's wait and no turn. Before, the time since the owner made way was
// measured from the zero time: the delivery waited 5 minutes, the owner's
// next turn was set 1,281,022 hours ahead and never dropped, and an hour
// later each refused delivery of the owner waited 2.5 to 5 minutes.
func TestOwnerSnoozeAfterLastDeliveryEnded(t *testing.T) {
	s := &ownerSlots{limit: 2}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 2 {
		if ok, _ := s.acquire("acme", t0); !ok {
			t.Fatal("a free slot refused")
		}
	}
	ok, wait := s.acquire("acme", t0.Add(time.Second))
	if ok {
		t.Fatal("over the limit, admitted")
	}
	end := t0.Add(2 * time.Second)
	s.done("acme", t0, end)
	s.done("acme", t0, end)
	if got := s.snooze("acme", 1, false, end, wait); got > wait {
		t.Errorf("snoozed %s with nothing in flight, want at most acquire's wait %s", got, wait)
	}
	if ahead := nextTurnAhead(s, "acme", end); ahead > 0 {
		t.Errorf("with nothing in flight, the owner's next turn is %s ahead, want none", ahead)
	}

	// An hour later, the owner at its limit again: a refused delivery gets
	// the owner's next turn, a slot's time away (1 s without progress over
	// a limit of 2), not the back of a backlog it does not have.
	t1 := t0.Add(time.Hour)
	for range 2 {
		if ok, _ := s.acquire("acme", t1); !ok {
			t.Fatal("an hour later, a free slot refused")
		}
	}
	now := t1.Add(time.Second)
	ok, wait = s.acquire("acme", now)
	if ok {
		t.Fatal("an hour later, over the limit, admitted")
	}
	slot := time.Second / 2
	if got := s.snooze("acme", 2, false, now, wait); got > max(wait, slot) {
		t.Errorf("an hour later: snoozed %s, want at most %s (acquire's wait or a slot's time)", got, max(wait, slot))
	}
	if ahead := nextTurnAhead(s, "acme", now); ahead > slot {
		t.Errorf("an hour later: the owner's next turn is %s ahead, want at most a slot's time, %s", ahead, slot)
	}
}

// The same race run for real: two workers run Work's admission (back,
// acquire, then snooze or a try that ends at once) for one owner at a limit
// of 1, so that one's refusal is often followed by the other's try ending
// before the snooze. The owner's next turn is never more than
// ownerBacklogMax ahead. Before, it ended 2,562,047 hours ahead.
func TestOwnerSnoozeRacingTheLastTryEnding(t *testing.T) {
	s := &ownerSlots{limit: 1}
	const owner = "acme"
	var (
		mu    sync.Mutex
		worst time.Duration
		wg    sync.WaitGroup
	)
	for g := range int64(2) {
		wg.Go(func() {
			id := g + 1 // the worker's job, snoozed and back again
			for range 20_000 {
				turned := s.back(id)
				ok, wait := s.acquire(owner, time.Now())
				if ok {
					s.done(owner, time.Now(), time.Now())
					continue
				}
				now := time.Now()
				got := s.snooze(owner, id, turned, now, wait)
				ahead := max(got, nextTurnAhead(s, owner, now))
				mu.Lock()
				worst = max(worst, ahead)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if worst > ownerBacklogMax {
		t.Errorf("a snooze or the owner's next turn was %s ahead, want at most ownerBacklogMax (%s)", worst, ownerBacklogMax)
	}
	if ahead := nextTurnAhead(s, owner, time.Now()); ahead > ownerBacklogMax {
		t.Errorf("at the end, the owner's next turn is %s ahead, want at most %s", ahead, ownerBacklogMax)
	}
}
