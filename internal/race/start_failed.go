package race

import (
	"context"

	"github.com/routerhq/router/internal/store"
)

// startFailed acts on an attempt the database kept from being started by an
// error that is none of the store's refusals — a dropped connection, a
// restart or fail-over, a statement's error — on its creation (the attempt,
// if it committed, recorded as never sent: abandonCreated) or on its running
// mark (recorded as never sent: recordNotSent). Its request never left: the
// attempt counts neither as its target tried nor against max_attempts (the
// caller gave them back), and the job is not failed for a target it could
// not try.
//
// A connection dropped by a restart is mostly replaced by the next one the
// pool dials, so the start is tried once more at once: a retry on its own
// target, any other attempt on the next target not yet used (its own first).
// Failing again, the attempt is left as one refused on a held row is
// (heldRow): a retry is kept (keepRetry), a hedge goes back on the hedge
// clock (its caller), a failover waits for the next attempt to end, and a
// race with nothing in flight leaves the job to its lease (leftToLease) for
// recovery to run on, unsettled. started says whether the start tried again
// at once started an attempt.
func (o *orchestrator) startFailed(ctx context.Context, provider, role string, beforeLaunch func(*store.Attempt), what string, err error) (started bool) {
	if !o.startingAgain {
		p := provider
		if role != store.RoleRetry {
			p = o.next()
		}
		if p != "" {
			o.log.Warn(what+" (a database error); not sending it, and trying once more at once",
				"provider", provider, "role", role, "next", p, "err", err)
			o.startingAgain = true
			defer func() { o.startingAgain = false }()
			return o.startThen(ctx, p, role, beforeLaunch)
		}
	}
	o.startFailedErr = err
	if role == store.RoleRetry {
		o.keepRetry(provider)
	}
	o.log.Warn(what+" (a database error); not sending it. The attempts in flight go on; with none left the job is left to its lease "+
		"(recovery adopts it once the lease is released or expires)", "provider", provider, "role", role, "err", err)
	return false
}
