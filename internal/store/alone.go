package store

import (
	"context"
	"time"
)

// runAlone runs fn, one claim, win or delivery write that its batch found
// blocked on a row another transaction holds (past batchLockWait), alone on
// its caller's goroutine and outside the shared batches (see
// batchSettingsSQL): it tells the test hook onAlone (nil outside tests), then
// runs fn with the alone lock wait (aloneLockWait) on ctx bounded by the
// batch's own bound plus that wait (execTimeout+wait).
//
// ctx is what the run may be given up for: context.Background() for an item
// carried out whoever waits for it (a claim, a win), the caller's context for
// one its caller may abandon (a delivery write).
func runAlone(ctx context.Context, onAlone func(), fn func(ctx context.Context, wait time.Duration)) {
	if onAlone != nil {
		onAlone()
	}
	wait := aloneLockWait()
	ctx, cancel := context.WithTimeout(ctx, execTimeout+wait)
	defer cancel()
	fn(ctx, wait)
}
