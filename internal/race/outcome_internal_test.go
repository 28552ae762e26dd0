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
