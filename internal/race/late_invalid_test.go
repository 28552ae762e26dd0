package race_test

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An answer that breaks the contract, arriving after recovery marked its
// attempt unknown (its lease expired while the request was out), is stored
// as the live race stores an invalid answer: the attempt is `invalid`, with
// its validation errors. It was resolved `failed` with only its error, and
// the job never said which rules the answer broke. The job goes on as
// before: it resumes and fails over to the fallback, which wins. Found by
// review (rrecov12, suspicion 4).
func TestLateInvalidAnswerKeepsItsViolations(t *testing.T) {
	b, j := lateFailure(t, race.Route{}, providers.Step{Output: `{"category":"nonsense"}`,
		Usage: &providers.Usage{PromptTokens: 100, CompletionTokens: 5, TotalTokens: 105}})
	if j.State != store.JobSucceeded || b.Prov["fallback"].Calls() != 1 {
		t.Fatalf("job %s, fallback calls %d; want succeeded on the fallback (the late invalid answer fails over)",
			j.State, b.Prov["fallback"].Calls())
	}
	a := racetest.AttemptOn(j, "primary")
	if a == nil {
		t.Fatalf("no primary attempt: %s", attemptsOf(j))
	}
	var violations []map[string]any
	if len(a.ValidationErrors) > 0 {
		if err := json.Unmarshal(a.ValidationErrors, &violations); err != nil {
			t.Fatalf("primary's validation_errors %s: %v", a.ValidationErrors, err)
		}
	}
	if a.State != store.AttemptInvalid || len(violations) == 0 {
		t.Fatalf("primary attempt %s with validation_errors %s; want invalid with the answer's violations, as the live race stores it",
			a.State, a.ValidationErrors)
	}
	if lateKind(t, a) != "invalid_output" || len(a.Usage) == 0 {
		t.Fatalf("primary attempt error %s, usage %s; want kind invalid_output and the answer's usage", a.Error, a.Usage)
	}
}
