package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// refusingPlan is an executor whose Plan says no provider can take a job
// while refuse is set (every breaker open, say).
type refusingPlan struct {
	api.Executor
	refuse *atomic.Bool
}

func (e refusingPlan) Plan(j *store.Job) (store.JobPlan, json.RawMessage, bool, error) {
	if e.refuse.Load() {
		return nil, json.RawMessage(`[]`), false, nil
	}
	return e.Executor.Plan(j)
}

// A failed job whose key expired and was claimed by a newer job can never be
// retried (409 idempotency-key-rebound, docs/api.md). While no provider is
// eligible, its retry must still say so, not answer 503 no-eligible-provider
// "retry it after Retry-After", which the caller obeys only to be refused 409
// (or, with no Retry-After, told to wait for the operator).
func TestRetryOfReboundJobWithNoEligibleProviderIs409(t *testing.T) {
	var refuse atomic.Bool
	b := setup(t, options{
		respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Output: `{"category":"nope"}`}
			}
			return providers.Step{Output: validTriage}
		},
		exec: func(e api.Executor) api.Executor { return refusingPlan{e, &refuse} },
	})
	first := b.create(t, acmeKey, "rebound-noeligible", triageBody("x"), "Prefer", "wait=30")
	if first.body["state"] != "failed" {
		t.Fatalf("first: %s", first.raw)
	}
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	newer := b.create(t, acmeKey, "rebound-noeligible", triageBody("y"), "Prefer", "wait=30")
	if newer.status != http.StatusCreated || newer.job() == first.job() {
		t.Fatalf("claim of the expired key: %d %s", newer.status, newer.raw)
	}
	refuse.Store(true)
	r := b.do(t, "POST", "/v1/jobs/"+first.job()+"/retry", acmeKey, "")
	typ, _ := r.body["type"].(string)
	if r.status != http.StatusConflict || !strings.HasSuffix(typ, "idempotency-key-rebound") {
		t.Errorf("retry of a job whose key a newer job holds, no provider eligible: %d %s %s; want 409 idempotency-key-rebound (it can never be retried)",
			r.status, r.header.Get("Retry-After"), r.raw)
	}
}
