package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A fixed hedge_after applies to every attempt in flight, so it must come
// before each one's own first-byte deadline, not only the first target's (the
// configuration checks that one). The primary fails at once and the failover
// to "b" is silent; b's deadline (2 s) is below hedge_after (3 s), so the
// hedge on "c" comes at three quarters of it, as an adaptive delay would, and
// wins. (Found in review: the fixed delay was not clamped, b went unknown
// before its hedge was due, which blocked every new attempt, and the job
// parked unknown with c never tried.)
func TestFixedHedgeAfterClampedBelowEachTargetsDeadline(t *testing.T) {
	b := setup(t, race.Route{HedgeAfter: 3 * time.Second},
		provSpec{name: "a", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
		provSpec{name: "b", respond: hang, timeout: 2 * time.Second},
		provSpec{name: "c", respond: ok(validTriage)},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || attemptBy(j, "c") == nil || attemptBy(j, "c").Role != store.RoleHedge {
		t.Fatalf("job %s (attempts: %s); want c's hedge to win: b's hedge was due 3s after it started, but b goes unknown at 2s",
			j.State, roles(j))
	}
}

// A hedge delay is never more than three quarters of what is left of the
// job's deadline when the attempt starts: in a job adopted with 8 s of its
// 20 s left, the silent primary is hedged after 6 s, not after hedge_max
// (10 s, the adaptive delay without history), by which time the deadline has
// cut the primary (unknown) and stopped the job. (The fallback has 2 s to
// win before the deadline.)
func TestHedgeDelayCappedByWhatIsLeftOfTheJobsDeadline(t *testing.T) {
	b := setup(t, race.Route{Deadline: 20 * time.Second, AdaptiveHedge: true, HedgeMin: 10 * time.Millisecond, HedgeMax: 10 * time.Second},
		provSpec{name: "primary", respond: hang},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submitWithoutRunning(t, "dead-process")
	backdate(t, b, job.ID, 12*time.Second)
	b.runner.RecoverOnce(context.Background(), 10)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || attemptBy(j, "fallback") == nil {
		t.Fatalf("adopted job %s (%v), attempts %s: want the fallback's hedge, due before the deadline, to win",
			j.State, derefString(j.Error), roles(j))
	}
}
