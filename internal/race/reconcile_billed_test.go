package race_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// Reconciliation that finds the provider's record of an unknown attempt to be
// a completion it refused or filtered resolves the attempt as failed — and
// records the usage the provider billed for it, as the live attempt would
// have. (Found in review: the usage was dropped, so the attempt had no cost.)
// The job then fails with that rejection, as it would have live.
func TestReconcileFoundBilledFailureRecordsUsage(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	billed := providers.Usage{PromptTokens: 40, CompletionTokens: 7, TotalTokens: 47}
	b.prov["primary"].SetLookupFailure(j.Attempts[0].ID, &providers.Error{Provider: "primary", Kind: providers.KindContentPolicy,
		Message: "the stored completion was filtered", Usage: &billed, ResponseID: "resp-filtered", ResponseModel: "primary-model"})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	p := attemptBy(j, "primary")
	if p.State != store.AttemptFailed || !strings.Contains(string(p.Error), "record of this request is a failure") {
		t.Fatalf("primary %s error %s, want failed: the provider's record is a failure", p.State, p.Error)
	}
	var u providers.Usage
	if err := json.Unmarshal(p.Usage, &u); err != nil || u != billed {
		t.Fatalf("reconciled attempt's usage %s (%v), want what the provider billed: %+v", p.Usage, err, billed)
	}
	if p.ProviderResponseID == nil || *p.ProviderResponseID != "resp-filtered" {
		t.Fatalf("reconciled attempt's provider_response_id %v, want resp-filtered", p.ProviderResponseID)
	}
	// The record is a content-policy rejection: the job fails with it, as
	// the live attempt's would have (SPEC §6.3), and is not failed over.
	if j.State != store.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "filtered") || b.prov["fallback"].Calls() != 0 {
		t.Fatalf("job %s (%s), fallback called %d times: want failed with the provider's content-policy rejection, not failed over",
			j.State, derefString(j.Error), b.prov["fallback"].Calls())
	}
}

// Likewise a found completion that breaks the contract: failed, and billed.
func TestReconcileFoundInvalidOutputRecordsUsage(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	billed := providers.Usage{PromptTokens: 30, CompletionTokens: 9, TotalTokens: 39}
	b.prov["primary"].SetLookupResult(j.Attempts[0].ID, &providers.Response{Content: `{"category":"nonsense"}`, Model: "primary-model",
		ResponseID: "resp-invalid", Usage: billed})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	p := attemptBy(j, "primary")
	if p.State != store.AttemptInvalid || !strings.Contains(string(p.Error), "breaks the contract") ||
		len(p.ValidationErrors) == 0 || lateKind(t, p) != "invalid_output" {
		t.Fatalf("primary %s error %s validation_errors %s, want invalid (kind invalid_output) with the answer's violations: "+
			"its output breaks the contract", p.State, p.Error, p.ValidationErrors)
	}
	var u providers.Usage
	if err := json.Unmarshal(p.Usage, &u); err != nil || u != billed {
		t.Fatalf("reconciled attempt's usage %s (%v), want what the provider billed: %+v", p.Usage, err, billed)
	}
	if p.ResponseModel == nil || *p.ResponseModel != "primary-model" {
		t.Fatalf("reconciled attempt's response_model %v, want primary-model", p.ResponseModel)
	}
}
