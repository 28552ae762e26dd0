package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// docs/race.md (Retries, Caller-fault refusals): after a caller-fault
// refusal by one target, another target already working on the request goes
// on, "its retries included", and no target not yet tried is started. A retry
// whose Retry-After leaves less than its target's first-byte budget before
// the deadline is skipped only "if a target is left whose circuit breaker
// would admit it now" to fail over to; "With no such target left ..., the
// retry is still made."
//
// Here the route has a third target, but the refusal closed the race to it:
// there is nothing to fail over to, so the primary's retry near the deadline
// is made (it was dropped "to fail over", and the job failed with no
// failover and the retry unused).
func TestRetryNearDeadlineMadeWhenARefusalForbidsFailover(t *testing.T) {
	obs := newRefusalEnded("fallback")
	refused := obs.of("fallback")
	// deadline 3s; the primary's first-byte budget 2.5s; its Retry-After 1s:
	// after the wait about 1.9s would be left, less than 2.5s.
	b := setupObserved(t, race.Route{HedgeAfter: 20 * time.Millisecond, Deadline: 3 * time.Second, MaxInflight: 2}, nil, obs,
		provSpec{name: "primary", maxRetries: 1, firstByte: 2500 * time.Millisecond, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				<-refused // silent until the hedge has refused the request
				return providers.Step{Status: 503, RetryAfter: time.Second}
			}
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step {
			return refusalStep(providers.KindBadRequest, "assistant prefill is not supported")
		}},
		provSpec{name: "third", respond: ok(validTriage)},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	if b.prov["third"].Calls() != 0 {
		t.Fatalf("set-up: third was called %d times; the refusal closes the race to targets not yet tried", b.prov["third"].Calls())
	}
	if j.State != store.JobSucceeded || b.prov["primary"].Calls() != 2 {
		t.Fatalf("job %s (error %s), primary calls %d: want the primary's retry made (nothing may be failed over to) and the job succeeded",
			j.State, refusalJobError(j), b.prov["primary"].Calls())
	}
}
