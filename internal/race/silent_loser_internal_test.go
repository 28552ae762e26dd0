package race

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// Only a loser a hedge was started for, and that still had no response byte
// when it was cut, counts against its breaker: a loser that had begun
// answering, or one never hedged (cut by a win that came otherwise), stays
// excluded, as a cancelled attempt.
func TestSilentPastHedgeNeedsAHedgeAndSilence(t *testing.T) {
	start := time.Now().Add(-time.Second)
	never := &flight{start: start}
	if _, silent := never.silentPastHedge(); silent {
		t.Error("an attempt no hedge was started for counts as a silent loser")
	}
	var none *flight
	if _, silent := none.silentPastHedge(); silent {
		t.Error("an attempt off the hedge clock counts as a silent loser")
	}
	answering := &flight{start: start}
	answering.hedgedAfter.Store(int64(300 * time.Millisecond))
	answering.answering.Store(true)
	if _, silent := answering.silentPastHedge(); silent {
		t.Error("a loser that had begun answering counts as a silent loser")
	}
	silentOne := &flight{start: start}
	silentOne.hedgedAfter.Store(int64(300 * time.Millisecond))
	if after, silent := silentOne.silentPastHedge(); !silent || after != 300*time.Millisecond {
		t.Errorf("a loser silent past the hedge it caused: silent=%v after %s, want silent after 300ms", silent, after)
	}
}

// A silent loser is a failure for its breaker; any other cancelled attempt,
// and a valid answer discarded after its job was cancelled or its attempt
// resolved, is not.
func TestLoserOutcomes(t *testing.T) {
	cases := []struct {
		res  attemptResult
		want Outcome
	}{
		{attemptResult{state: store.AttemptCancelled, silentLoser: true}, OutcomeFailure},
		{attemptResult{state: store.AttemptCancelled}, OutcomeIgnore},
		{attemptResult{state: store.AttemptCancelled, discarded: true}, OutcomeSuccess},
		{attemptResult{state: store.AttemptFailed, discarded: true}, OutcomeSuccess},
		{attemptResult{state: store.AttemptLost}, OutcomeSuccess},
	}
	for _, c := range cases {
		if got := outcomeOf(c.res); got != c.want {
			t.Errorf("%s (silent loser %v, discarded %v): %v, want %v", c.res.state, c.res.silentLoser, c.res.discarded, got, c.want)
		}
	}
}
