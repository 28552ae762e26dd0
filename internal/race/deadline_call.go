package race

import (
	"context"
	"time"
)

// jobDeadlineKey is the context key under which an attempt's run carries
// when its job's deadline passes (withJobDeadline).
type jobDeadlineKey struct{}

// withJobDeadline has ctx carry at, the job's deadline (zero: none), to the
// attempt run with it (boundByJobDeadline).
func withJobDeadline(ctx context.Context, at time.Time) context.Context {
	if at.IsZero() {
		return ctx
	}
	return context.WithValue(ctx, jobDeadlineKey{}, at)
}

// boundByJobDeadline is ctx cut, at the job's deadline that ctx carries
// (withJobDeadline), with the cause the orchestration gives when its timer
// fires (deadlinePassed: errDeadline), so that the attempt is recorded the
// same way whichever comes first. The orchestration learns of the deadline
// only when it next selects: busy past it — a conformance gate's read, an
// attempt's creation waiting for a held job row, its routing's record — it
// would leave the call running, and a late answer could win the job past
// its deadline. cancel must be called once the attempt has ended.
//
// It cancels ctx as the orchestration's timer does (cancel(errDeadline)),
// without setting ctx's Deadline: a loser already cut and kept running
// (keepLoser) is not cut again, as the orchestration's later cancel does
// not cut it, and nothing that reads ctx.Deadline() sees another bound.
func boundByJobDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	at, ok := ctx.Value(jobDeadlineKey{}).(time.Time)
	if !ok {
		return ctx, func() {}
	}
	c, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(time.Until(at), func() { cancel(errDeadline) })
	return c, func() {
		timer.Stop()
		cancel(context.Canceled)
	}
}
