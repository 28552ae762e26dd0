package race_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A reconciled attempt's usage whose total is larger than its split (a
// thinking model's thoughts reported only in the total) is stored priced
// whole, as the live attempt's would be: its completion is the total less
// the prompt.
func TestReconcileFillsTheTotalsGap(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	billed := providers.Usage{PromptTokens: 20, CompletionTokens: 198, TotalTokens: 623}
	b.prov["primary"].SetLookupResult(j.Attempts[0].ID, &providers.Response{Content: `{"category":"nonsense"}`, Model: "primary-model",
		ResponseID: "resp-thinking", Usage: billed})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	p := attemptBy(j, "primary")
	var u providers.Usage
	if err := json.Unmarshal(p.Usage, &u); err != nil || u.PromptTokens != 20 || u.CompletionTokens != 603 || u.TotalTokens != 623 {
		t.Fatalf("reconciled attempt's usage %s (%v), want completion 603: the total less the prompt", p.Usage, err)
	}
}
