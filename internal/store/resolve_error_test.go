package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A "failed" resolution that carries the provider's recorded failure
// (reconciliation's lookup found one) makes it the attempt's error: its
// kind, action and message replace the lease_expired error that made the
// attempt unknown, which the resolution keeps as `replaced`. Without one the
// attempt keeps its error and gains the resolution, as before.
func TestFailedResolutionWithErrorReplacesTheUnknownOne(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	type stored struct {
		Kind       string `json:"kind"`
		Action     string `json:"action"`
		Message    string `json:"message"`
		Resolution struct {
			Outcome  string `json:"outcome"`
			Message  string `json:"message"`
			Replaced *struct {
				Kind string `json:"kind"`
			} `json:"replaced"`
		} `json:"resolution"`
	}
	read := func(jobID string) stored {
		t.Helper()
		got, err := b.st.GetJobAny(ctx, jobID)
		if err != nil || got.Attempts[0].State != store.AttemptFailed {
			t.Fatalf("job %+v (%v): want its attempt failed", got, err)
		}
		var e stored
		if err := json.Unmarshal(got.Attempts[0].Error, &e); err != nil {
			t.Fatalf("error %s: %v", got.Attempts[0].Error, err)
		}
		return e
	}

	j := expiredFirstAttempt(t, b, "recorded")
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{JobID: j.ID, Seq: 1, Outcome: "failed", Note: "reconciled: filtered",
		Error: map[string]any{"kind": "content_policy", "action": "stop", "message": "provider p: content_policy: filtered"}}); err != nil {
		t.Fatal(err)
	}
	e := read(j.ID)
	if e.Kind != "content_policy" || e.Action != "stop" || e.Message != "provider p: content_policy: filtered" ||
		e.Resolution.Outcome != "failed" || e.Resolution.Message != "reconciled: filtered" ||
		e.Resolution.Replaced == nil || e.Resolution.Replaced.Kind != "lease_expired" {
		t.Fatalf("attempt error %+v: want the recorded failure, its resolution keeping the lease_expired error it replaced", e)
	}

	j = expiredFirstAttempt(t, b, "noted")
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{JobID: j.ID, Seq: 1, Outcome: "failed", Note: "no record"}); err != nil {
		t.Fatal(err)
	}
	if e := read(j.ID); e.Kind != "lease_expired" || e.Resolution.Message != "no record" || e.Resolution.Replaced != nil {
		t.Fatalf("attempt error %+v: want its lease_expired error kept, with the resolution", e)
	}
}
