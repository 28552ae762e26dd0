package webhook

import (
	"math/rand/v2"
	"sync"
	"time"
)

// ownerPauses is each owner's pause on this replica: an endpoint that answers
// a try 429 or 503 with a Retry-After asks for nothing before then, so every
// delivery of the owner (not only the event whose try got the answer, which
// its retry's wait covers: Backoff.NextRetry) is snoozed until it ends, then
// for its turn among the owner's waiting deliveries (ownerSlots.hold). The
// pause lasts the receiver's wait as the retry's does, at most
// webhooks.backoff_cap (send), and a later answer may only lengthen it. A
// held delivery is snoozed: neither a try (none is recorded) nor an attempt;
// the event is given up on by its age, as ever: at a failed try, or when it is
// held at webhooks.retry_for old (Worker.abandonHeld: nothing is sent).
//
// It is this replica's, kept in memory: a courtesy to the endpoint, not a
// guarantee. Other replicas go on sending the owner's events until each gets
// its own 429 or 503 (then pause too), and a restart forgets it; no database
// guarantee rests on it, and a delivery costs no round trip for it.
type ownerPauses struct {
	mu      sync.Mutex
	until   map[string]time.Time // by owner
	pruneAt time.Time            // when until is next swept of ended pauses
}

// ownerPausePrune is how often pause sweeps the ended pauses of owners that
// sent nothing since (held drops the others).
const ownerPausePrune = time.Minute

// pause holds owner's deliveries for after from now, or longer if they
// already are.
func (p *ownerPauses) pause(owner string, now time.Time, after time.Duration) {
	until := now.Add(after)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.until == nil {
		p.until = map[string]time.Time{}
	}
	if until.After(p.until[owner]) {
		p.until[owner] = until
	}
	if now.After(p.pruneAt) {
		p.pruneAt = now.Add(ownerPausePrune)
		for o, u := range p.until {
			if u.Before(now) {
				delete(p.until, o)
			}
		}
	}
}

// held says whether a delivery of owner looking at now is held by the
// owner's pause, and when that ends. A held delivery waits for its turn among
// the owner's waiting deliveries from then (ownerSlots.hold), so that they
// do not all come back in the same moment, crowding River's fetches and the
// endpoint that has just recovered.
func (p *ownerPauses) held(owner string, now time.Time) (until time.Time, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok = p.until[owner]
	if !ok {
		return time.Time{}, false
	}
	if !now.Before(until) {
		delete(p.until, owner)
		return time.Time{}, false
	}
	return until, true
}

// spreadWait is wait plus less than spreadMax(wait) at random: the waits a
// receiver's Retry-After sets (the retries of the tries it answered; a
// pause's held deliveries when no owner limit gives them turns) end spread
// out, never before it asked.
func spreadWait(wait time.Duration) time.Duration {
	if spread := spreadMax(wait); spread > 0 {
		wait += rand.N(spread)
	}
	return wait
}

// spreadMax bounds spreadWait's spread: an eighth of the wait, at most
// ownerBusyMax. The redelivery window (config.RetryAfterSpread, which a test
// keeps equal) allows for it: a retry due that late still finds its event.
func spreadMax(wait time.Duration) time.Duration {
	return min(wait/8, ownerBusyMax)
}
