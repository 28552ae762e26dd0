package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// runAlone runs fn, one claim, win or delivery write that its batch found
// blocked on a row another transaction holds (past batchLockWait), alone on
// its caller's goroutine and outside the shared batches (see
// batchSettingsSQL): it tells the test hook onAlone (nil outside tests),
// takes one of the store's alone turns (aloneTurns), then runs fn with the
// alone lock wait (aloneLockWait) on ctx bounded by the batch's own bound
// plus that wait (execTimeout+wait). A refusal's look-up of its key
// (awaitKeyWrites) runs alone too, and only once its first try (batchLockWait,
// no turn taken) found the key's row still held.
//
// An item that gets no turn within that wait (or before ctx ends) is not
// run: fn is not called, nothing is sent, and runAlone returns an error that
// is Busy and wraps errNoAloneTurn; the caller answers it as its row still
// held (claimAlone, winAlone, writeDelivery).
//
// turns is the set the item takes its turn from: claims (and the key
// look-ups that found the key held) take s.alone; wins and delivery writes
// s.aloneOwed, so that the claims any client may resend at will (every
// resend of a key or owner found held goes alone at once, each second) can
// never keep an answer already received and paid for — or a delivery's
// record — from being written (found in review).
//
// ctx is what the run may be given up for: context.Background() for an item
// carried out whoever waits for it (a claim, a win), the caller's context for
// one its caller may abandon (a delivery write).
func (s *Store) runAlone(ctx context.Context, turns *aloneTurns, onAlone func(), fn func(ctx context.Context, wait time.Duration)) error {
	if onAlone != nil {
		onAlone()
	}
	wait := aloneLockWait()
	if err := turns.take(ctx, wait); err != nil {
		return err
	}
	defer turns.give()
	ctx, cancel := context.WithTimeout(ctx, execTimeout+wait)
	defer cancel()
	fn(ctx, wait)
	return nil
}

// aloneTurns bounds how many items run alone at once per Store. Each holds a
// pool connection for its whole wait on a held row (aloneLockWait, a
// second; a limited owner's claim waits twice: awaitKeyRow, then the claim),
// and the rows stay held as long as their holder lasts — an operator's open
// transaction, a replica cut off mid-batch whose locks the server keeps until
// its TCP keepalive ends the session — while their clients resend every
// second or two (503 busy, Retry-After: 1) and each resend goes alone again
// (heldKeys, heldOwners). Unbounded, a few such clients took every
// connection of the pool, and every other tenant's batches on the replica
// failed with no connection (found in review). The lost claims' hand-overs
// take turns of their own for the same reason (inHeldKeyTurn).
type aloneTurns struct {
	slots chan struct{}
	// onWait, in tests, runs as a caller finds every turn taken and starts
	// waiting for one (SetOnAloneTurnWait).
	onWait func()
}

// aloneTurnsFor is the number of alone turns of one set (claims, or wins and
// delivery writes) for a pool of maxConns connections: a quarter of the
// pool, at least one; both sets full take half of it. The rest stays with the
// shared batches (maxBatchesInFlight connections) and the reads of requests
// and workers, however many rows are held; a few turns still let the rare,
// brief holds of normal operation (a resend meeting its own job's win, a
// cancellation's short transaction) be waited out side by side rather than
// one after the other.
func aloneTurnsFor(maxConns int32) int { return max(1, int(maxConns)/4) }

// errNoAloneTurn: an item to run alone got no alone turn within its wait
// (aloneTurns): it was not sent, and changed nothing.
var errNoAloneTurn = errors.New("no turn to wait alone for the row: as many items as the store lets wait alone at once were waiting")

// noAloneTurnError is errNoAloneTurn after waiting wait: Busy, as the row
// that sent its item alone is as far as anyone knows still held.
type noAloneTurnError struct{ wait time.Duration }

func (e *noAloneTurnError) Error() string {
	return fmt.Sprintf("%v (waited %s)", errNoAloneTurn, e.wait)
}
func (e *noAloneTurnError) Is(target error) bool {
	return target == errNoAloneTurn || target == ErrBusy
}

// take waits up to wait, and while ctx lasts, for a free turn.
func (t *aloneTurns) take(ctx context.Context, wait time.Duration) error {
	select {
	case t.slots <- struct{}{}:
		return nil
	default:
	}
	if t.onWait != nil {
		t.onWait()
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case t.slots <- struct{}{}:
		return nil
	case <-timer.C:
		return &noAloneTurnError{wait: wait}
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", &noAloneTurnError{wait: wait}, context.Cause(ctx))
	}
}

func (t *aloneTurns) give() { <-t.slots }
