package race_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// An answer reconciliation finds is a winner like any other (SPEC §6.7), and
// docs/providers.md says its usage is treated as a live answer's: "An answer
// whose provider reported no usage at all … its usage is estimated too, the
// prompt as above and the answer's content … whether it won, lost or was
// invalid"; "So is an answer whose usage has a total_tokens but no split";
// one "reported with completion_tokens: 0 for an answer with content" has
// its completion raised to the router's count; "A resolution or
// reconciliation that learns the real usage replaces the estimate". The
// live winner goes through answerUsage; reconcileOne's found answer only
// through plausibleUsage and totalGapFilled, and its Usage (a zero struct,
// never nil) replaces the attempt's stored prompt estimate in
// ResolveAttempt (usage = coalesce($2, usage)). So a found record without
// usage, with a total only, or with completion_tokens 0 makes the won
// attempt free (cost_usd needs prompt or completion tokens above 0), the
// job's cost_usd its losers' alone, and a chat job's completion says
// usage 0 without "estimated".
func TestReconciledAnswerUsageIsEstimatedAsALiveAnswers(t *testing.T) {
	for _, c := range []struct {
		name     string
		reported providers.Usage
	}{
		{"no usage", providers.Usage{}},
		{"total only", providers.Usage{TotalTokens: 81}},
		{"completion 0", providers.Usage{PromptTokens: 20, TotalTokens: 20}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, job, j := unknownOnHangingPrimary(t, validTriage)
			var before providers.Usage
			_ = json.Unmarshal(attemptBy(j, "primary").Usage, &before)
			b.prov["primary"].SetLookupResult(j.Attempts[0].ID, &providers.Response{Content: validTriage, Model: "primary-model",
				ResponseID: "resp-found", Usage: c.reported})
			b.runner.RecoverOnce(context.Background(), 10)
			j = b.waitSettled(t, job.ID)
			p := attemptBy(j, "primary")
			if j.State != store.JobSucceeded || p.State != store.AttemptWon {
				t.Fatalf("job %s, primary %s: want the found answer to win", j.State, p.State)
			}
			var u providers.Usage
			if err := json.Unmarshal(p.Usage, &u); err != nil {
				t.Fatalf("usage %s: %v", p.Usage, err)
			}
			if u.PromptTokens == 0 || u.CompletionTokens == 0 || !u.Estimated || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("reconciled winner's usage %s (reported %+v; the live run's estimate was %+v): want the router's count of "+
					"what was not reported (prompt and answer), marked estimated, as a live winner's (answerUsage)",
					p.Usage, c.reported, before)
			}
		})
	}
}

// A failure reconciliation finds in the provider's record without usage (a
// filtered completion whose record reports no tokens: providers' billed
// leaves Usage nil, Received true) drops the live run's estimate of the
// prompt (ResolveAttempt's failed: usage NULL when the stored one is
// estimated), where the same failure live keeps the router's count of the
// prompt (estimatedUsage: failed, received, no status). docs/providers.md
// drops the estimate only for a failure "without usage ('the provider has
// no record of it', an operator's failed) … since the provider did not do
// the work" — this provider has a record: it did the work.
func TestReconciledBilledFailureWithoutUsageKeepsThePromptEstimate(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	var before providers.Usage
	_ = json.Unmarshal(attemptBy(j, "primary").Usage, &before)
	if before.PromptTokens == 0 {
		t.Fatalf("unknown attempt's usage %s: want the live run's prompt estimate", attemptBy(j, "primary").Usage)
	}
	b.prov["primary"].SetLookupFailure(j.Attempts[0].ID, &providers.Error{Provider: "primary", Kind: providers.KindContentPolicy,
		Received: true, Message: "the stored completion was filtered", ResponseID: "resp-filtered"})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	p := attemptBy(j, "primary")
	if p.State != store.AttemptFailed {
		t.Fatalf("primary %s (error %s), want failed: the provider's record is a failure", p.State, p.Error)
	}
	var u providers.Usage
	_ = json.Unmarshal(p.Usage, &u)
	if u.PromptTokens == 0 {
		t.Errorf("reconciled billed failure's usage %s: the live run's prompt estimate (%d tokens) was dropped although the "+
			"provider's record shows it received and answered the request (a live failure of the same kind keeps it)", p.Usage, before.PromptTokens)
	}
}
