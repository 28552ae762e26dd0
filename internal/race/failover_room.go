package race

import (
	"context"
	"time"
)

// failoverRoom is the time a failover to provider p needs before the job's
// deadline: the floor a retry needs (retryFloor), or less when p's own
// first-byte budget is shorter (it answers within that, or fails knowably).
// Not the whole first-byte budget a retry waits for: on a short deadline that
// would refuse almost every failover, and a failover, unlike a retry, has no
// other target to leave the job to.
func (o *orchestrator) failoverRoom(p string) time.Duration {
	return min(o.retryRoom(p), retryFloor)
}

// failoverFits says whether a failover to provider p may be sent now: the
// route sets no deadline, or what is left of it is at least failoverRoom(p).
// Sent with less, the deadline would most likely cut it before any response
// byte, leaving the attempt — and the job, that would have failed knowably
// — unknown, with a paid call made that could not answer in time. When it
// does not fit, the race takes no more attempts (time only runs out): it
// stops with why, recorded in the job's routing, and the job fails once
// nothing is in flight. A retry already scheduled (its own room checked by
// retryWait) is left to start.
func (o *orchestrator) failoverFits(ctx context.Context, p string) bool {
	left, bounded := o.deadlineLeft()
	room := o.failoverRoom(p)
	if !bounded || left >= room {
		return true
	}
	why := "the job's deadline of " + o.route.Deadline.String() + " left no room for a failover to " + p + ": " +
		max(left, 0).Round(time.Millisecond).String() + " left, at least " + room.String() +
		" needed for its first byte; raise routes." + o.job.Route + ".deadline, or lower the timeouts" +
		" (timeout, first_byte_timeout) of the targets tried before it so that they fail sooner"
	o.log.Info("failover not sent: no room before the job's deadline", "provider", p, "left", left, "needed", room)
	if !o.failoverNoRoomNoted {
		o.failoverNoRoomNoted = true
		o.decisions = append(o.decisions, Decision{Provider: p, Event: "failover_no_room", Eligible: true, Reason: why})
		o.recordDecisions(ctx, "the failover refused for want of room")
	}
	if len(o.pending) == 0 && len(o.ready) == 0 {
		o.stop(why)
	}
	return false
}
