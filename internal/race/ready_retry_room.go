package race

import (
	"context"
	"time"
)

// readyRetryFits says whether provider p's retry, waiting in ready (it came
// due, or was refused by the store for a reason that passes, while it could
// not start: keepRetry, holdExtra, max_inflight), may still be sent now. Its
// room was checked when it was scheduled (retryWait), but it may start much
// later — when an attempt ends, a budget slot is freed, a held row or an
// unknown sibling is gone. It needs the room a failover to p needs
// (failoverRoom): with less, the deadline would most likely cut it before
// any response byte, leaving the attempt and the job unknown with a call paid
// for nothing. Such a retry is dropped; the race stops with why, in the
// deadline's words (FailedByDeadline), once no other retry waits (later is
// how many ready ones come after it), as failoverFits stops. The job's
// routing records it once per run (retry_no_room), as failoverFits records
// failover_no_room: the job's error names only the retry the race stopped on.
func (o *orchestrator) readyRetryFits(ctx context.Context, p string, later int) bool {
	left, bounded := o.deadlineLeft()
	room := o.failoverRoom(p)
	if !bounded || left >= room {
		return true
	}
	why := "the job's deadline of " + o.route.Deadline.String() + " left no room for the retry of " + p +
		", which could not start when it came due: " + max(left, 0).Round(time.Millisecond).String() + " left, at least " +
		room.String() + " needed for its first byte; raise routes." + o.job.Route + ".deadline"
	o.log.Info("retry not sent: no room before the job's deadline", "provider", p, "left", left, "needed", room)
	if !o.retryNoRoomNoted {
		o.retryNoRoomNoted = true
		o.decisions = append(o.decisions, Decision{Provider: p, Event: "retry_no_room", Eligible: true, Reason: why})
		o.recordDecisions(ctx, "the retry refused for want of room")
	}
	if r, ok := o.reasons[p]; ok {
		o.reasons[p] = r + "; not retried: no room left before the job's deadline"
	}
	if later == 0 && len(o.pending) == 0 && len(o.ready) == 0 {
		o.stop(why)
	}
	return false
}
