package race_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// docs/providers.md: "A count no request to the target can reach — above four
// times its context_window plus the max_tokens sent … — is not priced: the
// router counts the prompt or the answer in its place, total_tokens becomes
// the sum, and the usage is marked "estimated": true". A live attempt's usage
// goes through plausibleUsage; a reconciled one (recovery's reconcileOne)
// only through totalGapFilled, so a provider record whose prompt_tokens is an
// unsigned −1 (4294967295) is stored as reported and priced in full on a
// priced target — the 42,949 USD the live path was fixed for.
func TestReconciledAbsurdUsageIsNotTakenAsReported(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	b.prov["primary"].SetLookupResult(j.Attempts[0].ID, &providers.Response{Content: validTriage, Model: "primary-model",
		ResponseID: "resp-absurd", Usage: providers.Usage{PromptTokens: 4294967295, CompletionTokens: 5, TotalTokens: 4294967300}})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	p := attemptBy(j, "primary")
	var u providers.Usage
	if err := json.Unmarshal(p.Usage, &u); err != nil {
		t.Fatalf("usage %s: %v", p.Usage, err)
	}
	if u.PromptTokens == 4294967295 || !u.Estimated {
		t.Fatalf("reconciled attempt's usage %s: a prompt count no request to the target can reach is stored as reported "+
			"(and priced so on a priced target), not replaced by the router's count and marked estimated", p.Usage)
	}
}
