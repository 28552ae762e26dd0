package race_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// Reconciliation judges the provider's record of an unknown attempt exactly as
// the race would (SPEC §1, §8: an output wins only when it passes the schema
// and the business contract): a completion that breaks the prompt's contract
// (here an undeclared key) resolves the attempt as failed, and the job goes
// on to the fallback. It never becomes the job's result.
func TestReconcileFoundInvalidOutputFailsOver(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	const invalid = `{"category":"technical","priority":"high","summary":"Login broken for the user.","needs_human":false,"confidence":0.9}`
	b.prov["primary"].SetLookupResult(j.Attempts[0].ID, &providers.Response{Content: invalid, Model: "primary-model",
		ResponseID: "resp-1", Created: time.Now()})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	if strings.Contains(string(j.Result), "confidence") {
		t.Fatalf("the contract-breaking output became the job's result: %s", j.Result)
	}
	p, f := attemptBy(j, "primary"), attemptBy(j, "fallback")
	if p.State != store.AttemptInvalid || !strings.Contains(string(p.Error), "breaks the contract") ||
		len(p.ValidationErrors) == 0 || lateKind(t, p) != "invalid_output" {
		t.Fatalf("primary %s error %s validation_errors %s, want invalid (kind invalid_output) with the answer's violations: "+
			"its output breaks the contract", p.State, p.Error, p.ValidationErrors)
	}
	if j.State != store.JobSucceeded || f == nil || *j.CompletedBy != f.ID {
		t.Fatalf("job %s completed_by %v result %s, want the fallback's valid answer", j.State, j.CompletedBy, j.Result)
	}
}
