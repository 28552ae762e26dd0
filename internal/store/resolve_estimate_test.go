package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// An unknown attempt resolved as failed without usage loses the router's
// estimate of its prompt (the provider did not do the work: nothing is known
// to be billed); one resolved with the provider's usage gets that usage; an
// estimate stays only while the outcome is unknown.
func TestFailedResolutionDropsAnEstimatedUsage(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	estimate := map[string]any{"prompt_tokens": 40, "completion_tokens": 0, "total_tokens": 40, "estimated": true}
	unknownWithEstimate := func(key string) *store.Job {
		t.Helper()
		j := leasedJob(t, b, key, true)
		if err := b.st.FinishAttempt(ctx, j.Attempts[0].ID, store.AttemptOutcome{State: store.AttemptUnknown, Usage: estimate,
			Error: map[string]any{"kind": "timeout"}}); err != nil {
			t.Fatal(err)
		}
		return j
	}
	usageOf := func(j *store.Job) string {
		t.Helper()
		read, err := b.st.GetJobAny(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		return string(read.Attempts[0].Usage)
	}

	none := unknownWithEstimate("estimate-none")
	if u := usageOf(none); u == "" {
		t.Fatal("the unknown attempt's estimate was not stored")
	}
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: none.ID, Seq: 1, Outcome: "failed", Note: "no record"}); err != nil {
		t.Fatal(err)
	}
	if u := usageOf(none); u != "" && u != "null" {
		t.Fatalf("a failed resolution without usage kept the estimate %s", u)
	}

	billed := unknownWithEstimate("estimate-billed")
	real := map[string]any{"prompt_tokens": 45, "completion_tokens": 7, "total_tokens": 52}
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: billed.ID, Seq: 1, Outcome: "failed", Note: "filtered", Usage: real}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(usageOf(billed)), &got); err != nil || got["prompt_tokens"] != 45.0 || got["estimated"] != nil {
		t.Fatalf("usage after a billed failed resolution: %v (%v); want the provider's, not the estimate", got, err)
	}
}
