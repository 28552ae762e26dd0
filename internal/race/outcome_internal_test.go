package race

import (
	"testing"

	"github.com/routerhq/router/internal/store"
)

// An invalid output counts against its target's breaker unless it broke only
// the caller's own contract (a chat request's response_format).
func TestInvalidOutputOutcome(t *testing.T) {
	if got := outcomeOf(attemptResult{state: store.AttemptInvalid}); got != OutcomeFailure {
		t.Errorf("an output breaking the prompt's contract: %v, want a failure", got)
	}
	if got := outcomeOf(attemptResult{state: store.AttemptInvalid, callers: true}); got != OutcomeIgnore {
		t.Errorf("an output breaking only the caller's schema: %v, want ignored", got)
	}
}

// An attempt the job's deadline cut is not counted against its target: the
// router's own deadline, not the provider, ended it (a late hedge or
// failover gets only what is left of the job's time). Found by review.
func TestDeadlineCutOutcome(t *testing.T) {
	for _, state := range []string{store.AttemptUnknown, store.AttemptFailed} {
		if got := outcomeOf(attemptResult{state: state, cutByDeadline: true}); got != OutcomeIgnore {
			t.Errorf("%s, cut by the job's deadline: %v, want ignored", state, got)
		}
	}
	if got := outcomeOf(attemptResult{state: store.AttemptUnknown}); got != OutcomeFailure {
		t.Errorf("unknown on its own timeout: %v, want a failure", got)
	}
}
