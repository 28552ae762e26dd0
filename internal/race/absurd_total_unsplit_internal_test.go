package race

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// A winner's usage whose only count is a total no request can reach (a
// total-only gateway's unsigned −1: {"total_tokens": 4294967295}) or whose
// completion count is 0 beside such a total is bounded by plausibleUsage,
// and answerUsage returns the bounded usage at once ("its plausible counts
// kept as reported") without answerEstimate: the total becomes the sum of
// the split, 0 + 0, and the answer is recorded as {0, 0, 0, estimated} —
// free in cost_usd, router_cost_usd_total and the caller's usage. The same
// answer with a sane total ({"total_tokens": 81}) is estimated, prompt and
// answer (docs/providers.md: a total without a split, "both counts are the
// router's"; a completion_tokens 0 for an answer with content is raised to
// the router's count), and a billed failure with the garbage total is too
// (billedUsage estimates after bounding). A garbage figure makes the
// answer cheaper than a sane one.
func TestAbsurdTotalDoesNotMakeAWinnerFree(t *testing.T) {
	tgt, sp, a, _, in := estimateFixture(t, "Classify this ticket: the printer is on fire.")
	tgt.ContextWindow, sp.maxTokens = 128000, 256
	const content = `{"category":"hardware","summary":"The printer is on fire."}`
	for _, c := range []struct {
		name string
		u    providers.Usage
	}{
		{"total only, sane", providers.Usage{TotalTokens: 81}},
		{"total only, an unsigned -1", providers.Usage{TotalTokens: 4294967295}},
		{"completion 0, total an unsigned -1", providers.Usage{PromptTokens: 20, TotalTokens: 4294967295}},
	} {
		resp := providers.Response{Content: content, FinishReason: "stop", Usage: c.u}
		u, ok := answerUsage(tgt, sp, a, &resp)
		if !ok {
			u = c.u
		}
		if u.PromptTokens == 0 || u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
			t.Errorf("%s: winner's usage recorded as %+v (prompt estimate %d): want the router's count of the prompt and the answer "+
				"(cost_usd needs prompt or completion tokens above 0)", c.name, u, in)
		}
	}
	// Control: the billed-failure path estimates the same garbage total.
	reported := providers.Usage{TotalTokens: 4294967295}
	_, billed := billedOutcome(tgt, sp, a, &providers.Error{Kind: providers.KindContentPolicy, Received: true, Usage: &reported, Partial: content})
	if billed.PromptTokens == 0 || billed.CompletionTokens == 0 {
		t.Errorf("control: billed failure with the same total recorded as %+v", billed)
	}
	// Control for TestReconciledBilledFailureWithoutUsageKeepsThePromptEstimate:
	// a live billed failure without usage keeps the router's prompt estimate.
	if est, ok := estimatedUsage(tgt, sp, a, store.AttemptFailed, &providers.Error{Kind: providers.KindContentPolicy, Received: true}); !ok || est.PromptTokens == 0 {
		t.Errorf("control: a live received content-policy failure without usage is not estimated (%+v, %v)", est, ok)
	}
}

// The estimate answerUsage now makes after bounding keeps the counts the
// provider reported plausibly: a garbage prompt count beside a plausible
// completion count of 3 has its prompt counted by the router, and its
// completion stays the provider's 3 (not recounted, as an adapter's own
// estimate is).
func TestAbsurdPromptKeepsAPlausibleCompletion(t *testing.T) {
	tgt, sp, a, _, in := estimateFixture(t, "Classify this ticket: the printer is on fire.")
	tgt.ContextWindow, sp.maxTokens = 128000, 256
	resp := providers.Response{Content: `{"category":"hardware","summary":"The printer is on fire."}`, FinishReason: "stop",
		Usage: providers.Usage{PromptTokens: 1 << 40, CompletionTokens: 3, TotalTokens: 1<<40 + 3}}
	u, ok := answerUsage(tgt, sp, a, &resp)
	if want := (providers.Usage{PromptTokens: in, CompletionTokens: 3, TotalTokens: in + 3, Estimated: true}); !ok || u != want {
		t.Errorf("usage %+v (%v), want %+v: the prompt the router's count, the plausible completion the provider's", u, ok, want)
	}
}
