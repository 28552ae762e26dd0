package race_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A transient failure of one target while another target's retry waits out
// its backoff is retried too (SPEC §6.2: transient errors are retried on the
// same provider, bounded per provider). The silent primary is hedged on b,
// which fails at once asking for a Retry-After; the primary then fails the
// same way, with a retry left, while b's retry waits. Whichever retry is
// called first fails, the other answers: only a race that kept both retries
// succeeds, whatever their order. (Found in review: a job held one pending
// retry, so the second target's was dropped and the job failed with a retry
// unused.)
func TestRetryOfOneTargetIsKeptWhileAnothersIsPending(t *testing.T) {
	bFailed := make(chan struct{})
	var retries atomic.Int32
	retry := func() providers.Step {
		if retries.Add(1) == 1 {
			return providers.Step{Status: 503}
		}
		return providers.Step{Output: validTriage}
	}
	b := setup(t, race.Route{HedgeAfter: 10 * time.Millisecond, MaxInflight: 2, MaxAttempts: 6},
		provSpec{name: "primary", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				<-bFailed // silent until the hedge on b has failed
				return providers.Step{Status: 503, RetryAfter: 300 * time.Millisecond}
			}
			return retry()
		}},
		provSpec{name: "b", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(bFailed)
				return providers.Step{Status: 503, RetryAfter: 300 * time.Millisecond}
			}
			return retry()
		}},
	)
	j := b.submit(t)
	got := b.waitSettled(t, j.ID)
	if got.State != store.JobSucceeded {
		t.Fatalf("job %s (attempts %s): a target's retry was dropped while another's was pending; error: %s", got.State, roles(got), deref(got.Error))
	}
	if n := retries.Load(); n != 2 {
		t.Fatalf("%d retries called, want both targets' (attempts %s)", n, roles(got))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
