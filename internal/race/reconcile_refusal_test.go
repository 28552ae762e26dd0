package race_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// storedFailure is the part of an attempt's recorded error these tests read.
type storedFailure struct {
	Kind       string `json:"kind"`
	Action     string `json:"action"`
	Code       string `json:"code"`
	Resolution struct {
		Message  string `json:"message"`
		Replaced struct {
			Kind string `json:"kind"`
		} `json:"replaced"`
	} `json:"resolution"`
}

// An attempt that reconciliation found refused by the provider's content
// filter carries that failure as its error — kind, action, the provider's
// code — in place of the timeout that made it unknown (kept under the
// resolution as `replaced`). The chat endpoint reads the last ended
// attempt's kind for its 400 (content_policy_violation), and next_step tells
// the caller to correct the request rather than retry it, as after the live
// refusal.
func TestReconciledContentPolicyIsTheAttemptsError(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: hang, timeout: 30 * time.Millisecond})
	job := b.submit(t)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobUnknown {
		t.Fatalf("state %s, want unknown", j.State)
	}
	b.prov["primary"].SetLookupFailure(j.Attempts[0].ID, &providers.Error{Provider: "primary",
		Kind: providers.KindContentPolicy, Code: "content_filter", // Fault and Action as the taxonomy has them
		Message: "output withheld by the provider's content filter"})
	b.runner.RecoverOnce(context.Background(), 10)
	j = waitEnded(t, b.Bundle, job.ID)
	last := race.LastEndedAttempt(j)
	if last == nil {
		t.Fatalf("job %s has no ended attempt: %s", j.State, attemptsOf(j))
	}
	var e storedFailure
	if err := json.Unmarshal(last.Error, &e); err != nil {
		t.Fatalf("attempt error %s: %v", last.Error, err)
	}
	if e.Kind != string(providers.KindContentPolicy) || e.Action != string(providers.ActionStop) || e.Code != "content_filter" {
		t.Fatalf("reconciled attempt's error %s: want the provider's recorded failure (content_policy, stop, content_filter)", last.Error)
	}
	if e.Resolution.Replaced.Kind != string(providers.KindTimeout) || !strings.HasPrefix(e.Resolution.Message, "reconciled:") {
		t.Fatalf("reconciled attempt's error %s: want the resolution, keeping the timeout it replaced", last.Error)
	}
	if ns := race.NextStep(j); !strings.Contains(ns, "refused the request itself") {
		t.Fatalf("next_step %q: want the caller told to correct the request, as after the live refusal", ns)
	}
}

// A route that fails over on content policy does so after a reconciled
// rejection too, as it does after a live one.
func TestReconciledContentPolicyFailsOverWhenTheRouteSays(t *testing.T) {
	b := setup(t, race.Route{FailoverOnContentPolicy: true},
		provSpec{name: "primary", respond: hang, timeout: 30 * time.Millisecond},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobUnknown {
		t.Fatalf("state %s, want unknown", j.State)
	}
	b.prov["primary"].SetLookupFailure(j.Attempts[0].ID, &providers.Error{Provider: "primary",
		Kind: providers.KindContentPolicy, Action: providers.ActionStop, Code: "content_filter",
		Message: "output withheld by the provider's content filter"})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || attemptBy(j, "fallback") == nil || attemptBy(j, "fallback").State != store.AttemptWon {
		t.Fatalf("job %s (%s), attempts %s: want won by the fallback (the route fails over on content policy)", j.State, derefString(j.Error), attemptsOf(j))
	}
}

// A bad request the provider's record holds is the caller's too: the job
// fails with it, and no other target is sent the request.
func TestReconciledBadRequestIsNotFailedOver(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	b.prov["primary"].SetLookupFailure(j.Attempts[0].ID, &providers.Error{Provider: "primary",
		Kind: providers.KindBadRequest, Action: providers.ActionStop, StatusCode: 400, Message: "messages: prefill not supported"})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	if n := b.prov["fallback"].Calls(); n != 0 || j.State != store.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "prefill") {
		t.Fatalf("job %s (%s), fallback called %d times: want failed with the provider's bad_request, not failed over", j.State, derefString(j.Error), n)
	}
}

// A recorded failure that is the provider's (an empty answer) fails over, as
// it would have live, and the attempt says what the provider's record held.
func TestReconciledProviderFailureFailsOver(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	b.prov["primary"].SetLookupFailure(j.Attempts[0].ID, &providers.Error{Provider: "primary",
		Kind: providers.KindEmptyResponse, Message: "the stored completion has no choices"})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || attemptBy(j, "fallback") == nil || attemptBy(j, "fallback").State != store.AttemptWon {
		t.Fatalf("job %s (%s), attempts %s: want won by the fallback", j.State, derefString(j.Error), attemptsOf(j))
	}
	var e storedFailure
	if p := attemptBy(j, "primary"); json.Unmarshal(p.Error, &e) != nil || e.Kind != string(providers.KindEmptyResponse) {
		t.Fatalf("primary's error %s: want the recorded empty_response", p.Error)
	}
}
