package race_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// A failure the provider billed that reconciliation finds, whose usage has
// a total but no split ({"total_tokens": 81}: a gateway that reports only
// the total), is estimated as the live attempt's is (billedUsage): the
// prompt counted by the router, total_tokens the sum, marked estimated —
// not stored as a total that cannot be priced, which made the attempt
// free in cost_usd and lost_cost_usd.
func TestReconciledBilledFailureWithATotalButNoSplitIsEstimated(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	b.prov["primary"].SetLookupFailure(j.Attempts[0].ID, &providers.Error{Provider: "primary", Kind: providers.KindContentPolicy,
		Message: "the stored completion was filtered", Usage: &providers.Usage{TotalTokens: 81}, ResponseID: "resp-filtered"})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	p := attemptBy(j, "primary")
	if p.State != store.AttemptFailed {
		t.Fatalf("primary %s (error %s), want failed: the provider's record is a failure", p.State, p.Error)
	}
	var u providers.Usage
	if err := json.Unmarshal(p.Usage, &u); err != nil {
		t.Fatalf("usage %s: %v", p.Usage, err)
	}
	if u.PromptTokens == 0 || !u.Estimated || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Fatalf("reconciled billed failure's usage %s: a total with no split, want the router's count of the prompt, "+
			"total_tokens the sum, marked estimated", p.Usage)
	}
}
