package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A job left unknown says which attempt to resolve, with the request filled
// in, and so does a retry refused because of it: they used to say
// "POST /v1/jobs/{id}/attempts/{seq}/resolve", leaving the reader to find
// both. Found in review.
func TestUnknownJobNamesTheAttemptToResolve(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "hint-unknown", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	first := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	if err := b.st.FinishAttempt(ctx, first.ID, store.AttemptOutcome{State: store.AttemptFailed}); err != nil {
		t.Fatal(err)
	}
	second := startAttempt(t, b, j.ID, "p2", store.RoleFailover)
	if err := b.st.FinishAttempt(ctx, second.ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
		t.Fatal(err)
	}
	if s, err := b.st.SettleJob(ctx, j.ID, "all failed"); err != nil || s != store.JobUnknown {
		t.Fatalf("settle: %s, %v; want unknown", s, err)
	}
	path := "POST /v1/jobs/" + j.ID + "/attempts/2/resolve"
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Error == nil || !strings.Contains(*got.Error, "attempt 2 ended without a known outcome") || !strings.Contains(*got.Error, path) {
		t.Fatalf("the unknown job's error %q; want it to name attempt 2 and %q", derefOr(got.Error), path)
	}
	err = b.st.RetryJob(ctx, "acme", j.ID)
	if !errors.Is(err, store.ErrAttemptBlocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("retry of the unknown job: %v; want ErrAttemptBlocked naming %q", err, path)
	}
}

func derefOr(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}
