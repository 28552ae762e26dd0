package race_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// stopMidAnswer runs a job on a replica whose only target is answering when
// the replica is stopped (its drain run out), then has another replica —
// the same target, no retry, max_attempts as given — adopt it. It returns
// the job as the adopting replica ended it, and how many calls that
// replica's target received.
func stopMidAnswer(t *testing.T, maxAttempts int) (*store.Job, int32) {
	t.Helper()
	called := make(chan struct{}, 1)
	b := setup(t, race.Route{MaxAttempts: maxAttempts},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			called <- struct{}{}
			return providers.Step{Hang: true, HangAfterBytes: true, Output: validTriage} // half an answer, then silence
		}},
	)
	job := b.submit(t)
	<-called
	b.runner.Drain(0)
	stopNow(b)
	var calls atomic.Int32
	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Route: race.Route{MaxAttempts: maxAttempts},
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage),
			OnCall: func(int, *providers.Request) { calls.Add(1) }}}})
	other.Runner.RecoverOnce(context.Background(), 10)
	return other.WaitSettled(t, job.ID), calls.Load()
}

// SPEC §17: an attempt cut by its router's stop after its provider began
// answering (failed, kind shutdown) did not use its target up, nor a retry:
// the replica that adopts the job sends the request to the same target again
// — in the role it had, here the primary's, though max_retries is 0. It
// used to count as the target's failure: the adopting replica, with no
// target or retry left, failed the job with the cut attempt's reason, which
// says the job goes on on another replica. Found by review.
func TestShutdownCutAnswerIsSentAgainByTheAdoptingReplica(t *testing.T) {
	j, calls := stopMidAnswer(t, 4)
	if j.State != store.JobSucceeded || calls != 1 || len(j.Attempts) != 2 {
		t.Fatalf("job %s (%v), %d attempts, the adopting replica's target called %d times; want the request sent again once and the job succeeded",
			j.State, j.Error, len(j.Attempts), calls)
	}
	first, again := j.Attempts[0], j.Attempts[1]
	if first.State != store.AttemptFailed || errorKind(t, &first) != "shutdown" || again.Provider != "primary" || again.Role != store.RolePrimary {
		t.Fatalf("attempts: #1 %s %s (%s), #2 %s %s; want the cut one failed, kind shutdown, and the request sent again to the primary as the primary",
			first.Provider, first.State, errorKind(t, &first), again.Provider, again.Role)
	}
}

// The cut attempt still counts against max_attempts, in the database: its
// provider worked on it (and billed it), and a job whose replicas keep
// being stopped in the middle of its answers stops there. The job fails with
// the limit's reason, and the cut attempt's.
func TestShutdownCutAnswerCountsAgainstMaxAttempts(t *testing.T) {
	j, calls := stopMidAnswer(t, 1)
	reason := ""
	if j.Error != nil {
		reason = *j.Error
	}
	if j.State != store.JobFailed || calls != 0 || len(j.Attempts) != 1 ||
		!strings.Contains(reason, "max_attempts 1") || !strings.Contains(reason, "primary: shutdown") {
		t.Fatalf("job %s (%q), %d attempts, the adopting replica's target called %d times; want it failed at max_attempts 1 without a second call, its reason naming the limit and the cut attempt",
			j.State, reason, len(j.Attempts), calls)
	}
}
