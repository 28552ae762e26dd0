package race_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// SPEC §6.3: a content-policy rejection is propagated to the caller unless
// the route fails over on it. One that arrives after its attempt went unknown
// (the lease expired while the request was out) resolves the attempt with
// that rejection as its error, and the resumed race refuses as the live race
// would: the job fails with it, and the caller's prompt is not sent to the
// fallback. (It was failed over, as if the attempt had only timed out.)
func TestLateContentPolicyIsNotFailedOver(t *testing.T) {
	b, j := lateFailure(t, race.Route{}, providers.Step{Error: &providers.Error{Kind: providers.KindContentPolicy,
		Code: "content_filter", Message: "output withheld by the provider's content filter"}})
	if n := b.Prov["fallback"].Calls(); n != 0 {
		t.Errorf("fallback called %d times after the primary's late content-policy rejection; want 0 (the route does not fail over on content policy)", n)
	}
	if j.State != store.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "content filter") {
		t.Fatalf("job %s (%s): want failed with the content-policy rejection, as the live attempt's would", j.State, derefString(j.Error))
	}
	if a := racetest.AttemptOn(j, "primary"); a == nil || a.State != store.AttemptFailed || lateKind(t, a) != providers.KindContentPolicy {
		t.Fatalf("primary attempt %s: want failed with its late content_policy as its error", attemptsOf(j))
	}
	if ns := race.NextStep(j); !strings.Contains(ns, "refused the request itself") {
		t.Fatalf("next_step %q: want the caller told to correct the request, as after the live refusal", ns)
	}
}

// A bad request that arrives late is the caller's too: the job fails with
// it, and no other target is sent the request.
func TestLateBadRequestIsNotFailedOver(t *testing.T) {
	b, j := lateFailure(t, race.Route{}, providers.Step{Error: &providers.Error{Kind: providers.KindBadRequest,
		StatusCode: 400, Message: "messages: prefill not supported"}})
	if n := b.Prov["fallback"].Calls(); n != 0 || j.State != store.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "prefill") {
		t.Fatalf("job %s (%s), fallback called %d times: want failed with the provider's late bad_request, not failed over",
			j.State, derefString(j.Error), n)
	}
	if a := racetest.AttemptOn(j, "primary"); a == nil || lateKind(t, a) != providers.KindBadRequest {
		t.Fatalf("primary attempt %s: want its late bad_request as its error", attemptsOf(j))
	}
}

// A route that fails over on content policy does so after a late rejection
// too, as after a live one; the attempt's error is still the rejection.
func TestLateContentPolicyFailsOverWhenTheRouteSays(t *testing.T) {
	b, j := lateFailure(t, race.Route{FailoverOnContentPolicy: true}, providers.Step{Error: &providers.Error{Kind: providers.KindContentPolicy,
		Code: "content_filter", Message: "output withheld by the provider's content filter"}})
	if j.State != store.JobSucceeded || b.Prov["fallback"].Calls() != 1 {
		t.Fatalf("job %s (%s), fallback calls %d: want won by the fallback (the route fails over on content policy)",
			j.State, derefString(j.Error), b.Prov["fallback"].Calls())
	}
	if a := racetest.AttemptOn(j, "primary"); a == nil || a.State != store.AttemptFailed || lateKind(t, a) != providers.KindContentPolicy {
		t.Fatalf("primary attempt %s: want failed with its late content_policy as its error", attemptsOf(j))
	}
}

// A transient failure that arrives late, with retries left on its target, is
// retried there, as the live race retries it (SPEC §6.2), rather than failed
// over as if the attempt had only timed out.
func TestLateServerErrorIsRetriedOnItsTarget(t *testing.T) {
	b, j := lateFailureRetried(t, race.Route{}, 1, providers.Step{Status: 503})
	if j.State != store.JobSucceeded || b.Prov["primary"].Calls() != 2 || b.Prov["fallback"].Calls() != 0 {
		t.Fatalf("job %s (%s), primary calls %d, fallback calls %d, attempts %s: want won by the primary's retry, the fallback never called",
			j.State, derefString(j.Error), b.Prov["primary"].Calls(), b.Prov["fallback"].Calls(), attemptsOf(j))
	}
}
