package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A retry refused because the job's attempts are unknown says, in one
// sentence, which attempt is unknown and what to do: resolve it with the
// request filled in, then retry. It used to read "…; resolve first: Resolve
// it with POST …", the advice said twice, the second time capitalised
// mid-sentence. Found in review.
func TestRetryBlockedByUnknownIsOneSentence(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		unknown int
		want    string
	}{
		{"one", 1, "attempt 1 is unknown; resolve it with POST /v1/jobs/{id}/attempts/1/resolve, then retry the job"},
		{"two", 2, "attempts 1 and 2 are unknown; resolve each with POST /v1/jobs/{id}/attempts/{seq}/resolve, {seq} being 1 and 2, then retry the job"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "retry-blocked-"+tc.name, `{}`))
			if err != nil {
				t.Fatal(err)
			}
			// Started side by side (a hedge): an unknown attempt blocks new ones.
			var attempts []*store.Attempt
			for i := range tc.unknown {
				role := store.RolePrimary
				if i > 0 {
					role = store.RoleHedge
				}
				attempts = append(attempts, startAttempt(t, b, j.ID, []string{"p1", "p2"}[i], role))
			}
			for _, a := range attempts {
				if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
					t.Fatal(err)
				}
			}
			if s, err := b.st.SettleJob(ctx, j.ID, "all failed"); err != nil || s != store.JobUnknown {
				t.Fatalf("settle: %s, %v; want unknown", s, err)
			}
			err = b.st.RetryJob(ctx, "acme", j.ID)
			want := store.ErrAttemptBlocked.Error() + ": " + strings.ReplaceAll(tc.want, "{id}", j.ID)
			if !errors.Is(err, store.ErrAttemptBlocked) || err.Error() != want {
				t.Fatalf("retry of the unknown job: %v\nwant: %s", err, want)
			}
		})
	}
}
