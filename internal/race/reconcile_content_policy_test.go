package race_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// SPEC §6.3: a content-policy rejection is propagated to the caller unless the
// route says to fail over on it. A live attempt whose answer the provider's
// content filter withheld fails the job (refuse). The same answer found by
// reconciliation (the attempt had timed out, unknown) must not make the job
// fail over to the next provider: the route (FailoverOnContentPolicy false,
// the default) says not to.
func TestReconciledContentPolicyIsNotFailedOver(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	b.prov["primary"].SetLookupFailure(j.Attempts[0].ID, &providers.Error{Provider: "primary",
		Kind: providers.KindContentPolicy, Action: providers.ActionStop, Code: "content_filter",
		Message: "output withheld by the provider's content filter"})
	b.runner.RecoverOnce(context.Background(), 10)
	j = b.waitSettled(t, job.ID)
	if n := b.prov["fallback"].Calls(); n != 0 {
		t.Errorf("fallback called %d times after the primary's record turned out to be a content-policy rejection; want 0 (route does not fail over on content policy)", n)
	}
	if j.State != store.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "content") {
		t.Fatalf("job %s (%s), attempts %s: want failed with the content-policy rejection, as the live attempt would have", j.State, derefString(j.Error), attemptsOf(j))
	}
}

// The same on a route with one provider: the job fails, but its error must say
// what the provider's record says (the content filter withheld the output),
// not the timeout that made the attempt unknown — callers (and the chat
// endpoint's 400-vs-502 choice, callerFaultLastWord) read the cause from it.
func TestReconciledContentPolicyIsTheJobsReason(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: hang, timeout: 30 * time.Millisecond})
	job := b.submit(t)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobUnknown {
		t.Fatalf("state %s, want unknown", j.State)
	}
	b.prov["primary"].SetLookupFailure(j.Attempts[0].ID, &providers.Error{Provider: "primary",
		Kind: providers.KindContentPolicy, Action: providers.ActionStop, Code: "content_filter",
		Message: "output withheld by the provider's content filter"})
	b.runner.RecoverOnce(context.Background(), 10)
	j = waitEnded(t, b.Bundle, job.ID)
	if j.State != store.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "content") {
		t.Fatalf("job %s (%s): want failed, its error naming the content-policy rejection the provider's record holds", j.State, derefString(j.Error))
	}
}
