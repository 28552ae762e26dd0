package maintenance

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/routerhq/router/internal/store"
)

// LeaseStore takes, renews and gives up a leader lease.
type LeaseStore interface {
	TryLead(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	Resign(ctx context.Context, name, holder string) error
}

// Elector keeps this replica's claim on a leader lease. The lease row lives in
// PostgreSQL and expires on the database clock, so when the leader dies another
// replica takes over within TTL plus one renewal interval.
type Elector struct {
	store  LeaseStore
	name   string
	holder string
	ttl    time.Duration
	log    *slog.Logger
	now    func() time.Time // the local clock: time.Now but in tests

	mu    sync.Mutex
	until time.Time // this replica leads until then (local monotonic clock)
	down  bool      // StepDown was called: the lease is never taken again
	// owed: down, and the resignation has not succeeded yet — StepDown gave
	// up waiting for a renewal in flight, or its Resign failed. Once (so
	// Run, on its tick) resigns while it is set.
	owed bool
	// led: the lease this resignation gives up was this replica's — it led
	// when StepDown was called, or a try in flight then took the lease —
	// so the resignation is a step-down worth logging. A follower resigns
	// too (a renewal whose answer was lost may have left it the row), but
	// quietly: it stepped down from nothing.
	led bool
	// gained is closed, and replaced, each time this replica gains the
	// lead (Gained).
	gained chan struct{}

	// op (a one-slot semaphore) orders the lease's round trips: a renewal
	// in flight when StepDown is called ends before the resignation, so it
	// cannot take the lease back after it.
	op chan struct{}
}

// NewElector builds an elector for role name held as holder (the replica id).
// ttl is the lease; it is renewed every ttl/3. Default 15s.
func NewElector(st LeaseStore, name, holder string, ttl time.Duration, log *slog.Logger) *Elector {
	if ttl <= 0 {
		ttl = 15 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Elector{store: st, name: name, holder: holder, ttl: ttl, log: log, now: time.Now, op: make(chan struct{}, 1),
		gained: make(chan struct{})}
}

// Gained returns a channel that is closed when this replica next gains the
// lead: a try of Once that takes the lease while IsLeader was false. Each
// gain closes the channel handed out before it, so a caller asks again after
// each. Taken before IsLeader is asked, it misses no gain: one after the
// question closes it. Work that only the leader does and that should not
// wait for its own next tick once this replica leads — recovery adopting the
// jobs a draining leader hands over as it steps down (race.LeadGains) —
// waits on it.
func (e *Elector) Gained() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gained
}

// IsLeader reports whether this replica holds the lease now. It turns false on
// its own when renewals stop succeeding, before the lease expires in the
// database (the local deadline is counted from before the renewal was sent).
func (e *Elector) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now().Before(e.until)
}

// Once tries to take or renew the lease once and reports whether it leads.
// The try gets a third of the lease (one renewal interval) at most; one that
// gets no answer by then counts as failed. After StepDown it takes nothing
// and reports false; while the step-down's resignation is still owed (StepDown
// could not finish it) it tries the resignation again instead.
func (e *Elector) Once(ctx context.Context) bool {
	e.op <- struct{}{}
	defer func() { <-e.op }()
	e.mu.Lock()
	down := e.down
	e.mu.Unlock()
	if down {
		e.resignOwed(ctx)
		return false
	}
	sent := e.now()
	// One renewal interval at most: a renewal sent on a connection gone
	// silent (a failover whose old primary vanished, a partition) meets no
	// refusal and no answer, and would hold this loop until TCP gave up —
	// some 15 minutes on Linux, never if the host acknowledges but does not
	// answer — while a failover leaves every replica's elector stuck the
	// same way: nobody would lead, so no attempt lease would expire and
	// nothing be reconciled or deleted. The next tick tries again, on
	// another connection. A renewal that committed but whose answer was
	// lost is safe: it counts as failed (until is cleared below), so this
	// replica stops acting as leader, and the lease it renewed keeps every
	// other replica out until it expires or this replica renews it again.
	// The store sends it on a connection of its own, not the jobs' pool
	// (store.TryLead): a busy pool does not spend this budget.
	rctx, cancel := context.WithTimeout(ctx, e.ttl/3)
	ok, err := e.store.TryLead(rctx, e.name, e.holder, e.ttl)
	silent := rctx.Err() != nil && ctx.Err() == nil
	cancel()
	e.mu.Lock()
	was := e.now().Before(e.until)
	if err == nil && ok && !e.down { // StepDown, called meanwhile: resigned below
		// Stop a little before the database would let another replica in.
		e.until = sent.Add(e.ttl * 9 / 10)
		if !was {
			close(e.gained)
			e.gained = make(chan struct{})
		}
	} else {
		e.until = time.Time{}
	}
	if e.down && err == nil && ok {
		e.led = true // the try took the lease after StepDown: resigned below
	}
	down = e.down
	e.mu.Unlock()
	if down {
		// StepDown was called while the try was in flight, and may have
		// given up waiting for it (its caller allows a second): a renewal
		// that committed now would keep every other replica out for a
		// whole lease, with nothing left to resign until Close. Resign
		// here, still holding the op slot, so no try comes in between.
		e.resignOwed(ctx)
		return false
	}
	switch {
	case errors.Is(err, store.ErrNoFreeConnection):
		// Not the database's silence: it refused the lease a connection of
		// its own (at its connection limit), and this replica's jobs held
		// every pooled connection for the whole renewal interval.
		e.log.Warn("leader lease: no free database connection for the renewal in time (this replica's pool was busy, and the database, at its connection limit, refused the lease a connection of its own); this replica does not lead until a renewal succeeds (tried again at the next tick): raise the database's max_connections, or lower pool_max_conns",
			"role", e.name, "timeout", e.ttl/3, "err", err)
	case errors.Is(err, store.ErrLeaseRowHeld):
		// Not the database's silence either: it answered that another
		// session holds the lease's row (the store waits for it half the
		// renewal's budget at most), and the lease's connection is kept.
		// Every replica sees the same, so none leads until that session's
		// transaction ends.
		e.log.Warn("leader lease: another database session holds the lease's row (leader_leases), so no replica can renew or take the lease and none leads until that session's transaction ends; find it in pg_locks joined to pg_stat_activity and end its transaction (tried again at the next tick)",
			"role", e.name, "err", err)
	case err != nil && silent:
		e.log.Warn("leader lease: the database did not answer the renewal in time; this replica does not lead until a renewal succeeds (tried again at the next tick)",
			"role", e.name, "timeout", e.ttl/3, "err", err)
	case err != nil && ctx.Err() == nil:
		e.log.Warn("leader lease: could not renew", "role", e.name, "err", err)
	case ok && !was:
		e.log.Info("leader lease: this replica now leads", "role", e.name)
	case !ok && was:
		e.log.Warn("leader lease: lost", "role", e.name)
	}
	return err == nil && ok
}

// StepDown gives the lease up for good, for a replica that is shutting down
// (SPEC §17): IsLeader is false from now on, Once and Run take the lease no
// more, and the lease row is deleted, so another replica leads from its next
// try (within a third of the lease) — and its recovery adopts the jobs this
// replica hands over while it drains — instead of waiting for this replica's
// drain to end and Run's resignation. The resignation gets a third of the
// lease at most (less if ctx ends first): one that cannot finish, on a
// connection gone silent, is left to the lease's expiry rather than holding
// the caller. It can be called more than once.
//
// A renewal in flight keeps StepDown waiting until it ends or ctx does; if
// ctx ends first, StepDown returns ctx's error and the renewal resigns as it
// ends (Once). A resignation that fails is tried again by each Once, so by
// Run on its tick, until one succeeds.
func (e *Elector) StepDown(ctx context.Context) error {
	e.mu.Lock()
	if !e.down {
		e.down, e.owed = true, true
	}
	e.led = e.led || e.now().Before(e.until)
	e.until = time.Time{}
	e.mu.Unlock()
	select {
	case e.op <- struct{}{}:
		defer func() { <-e.op }()
	case <-ctx.Done(): // a renewal is in flight: it resigns as it ends
		e.log.Warn("leader lease: a renewal in flight outlasted the step-down; it resigns as it ends", "role", e.name, "err", ctx.Err())
		return ctx.Err()
	}
	return e.resignOwed(ctx)
}

// resignOwed resigns if the step-down's resignation is owed, for a third of
// the lease at most (less if ctx ends first). The caller holds the op slot.
func (e *Elector) resignOwed(ctx context.Context) error {
	e.mu.Lock()
	owed := e.owed
	e.mu.Unlock()
	if !owed {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, e.ttl/3)
	defer cancel()
	if err := e.store.Resign(rctx, e.name, e.holder); err != nil {
		e.log.Warn("leader lease: could not resign; tried again at the next tick, and another replica leads once the lease expires", "role", e.name, "err", err)
		return err
	}
	e.steppedDown()
	return nil
}

// steppedDown notes a step-down's resignation made: none is owed any more,
// and the lead, if this replica had it, is over.
func (e *Elector) steppedDown() {
	e.mu.Lock()
	e.owed = false
	led := e.led
	e.led = false
	e.mu.Unlock()
	if led {
		e.log.Info("leader lease: stepped down", "role", e.name)
	}
}

// Run renews the lease every ttl/3 until ctx ends, then resigns so another
// replica takes over at once (resignAtStop).
func (e *Elector) Run(ctx context.Context) {
	tick := time.NewTicker(e.ttl / 3)
	defer tick.Stop()
	for {
		e.Once(ctx)
		select {
		case <-ctx.Done():
			e.resignAtStop()
			return
		case <-tick.C:
		}
	}
}

// resignAtStop gives the lease up as Run ends, for 2 s at most, unless
// StepDown already has: its resignation deleted the row and closed the
// lease's connection (store.Resign), so another would only dial a new
// connection, during the shutdown, to delete nothing. It holds the op slot,
// as resignOwed's callers do, so it comes after a step-down's resignation
// still in flight.
func (e *Elector) resignAtStop() {
	e.mu.Lock()
	e.until = time.Time{}
	e.mu.Unlock()
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	select {
	case e.op <- struct{}{}:
		defer func() { <-e.op }()
	case <-rctx.Done():
		e.log.Warn("leader lease: a step-down's resignation in flight outlasted the stop; another replica leads once the lease expires", "role", e.name)
		return
	}
	e.mu.Lock()
	down, owed := e.down, e.owed
	e.mu.Unlock()
	if down && !owed {
		return // StepDown resigned
	}
	if err := e.store.Resign(rctx, e.name, e.holder); err != nil {
		e.log.Warn("leader lease: could not resign", "role", e.name, "err", err)
		return
	}
	if down { // the step-down's resignation, owed until now
		e.steppedDown()
	}
}
