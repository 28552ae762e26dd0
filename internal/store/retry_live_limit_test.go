package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// RetryJobWithin makes a failed job live again only while its owner has
// fewer than maxLive live jobs in the database (every replica's): at the
// limit nothing changes (the job stays failed, a *LiveLimitError); below it,
// or without a limit, the job runs again.
func TestRetryJobWithinTheOwnersLiveLimit(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	failed := failJob(t, b, "rl-failed")
	if _, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "rl-live", `{"n":2}`)); err != nil {
		t.Fatal(err)
	}
	err := b.st.RetryJobWithin(ctx, "acme", failed.ID, 1)
	var limitErr *store.LiveLimitError
	if !errors.Is(err, store.ErrLiveLimit) || !errors.As(err, &limitErr) || limitErr.Limit != 1 {
		t.Fatalf("retry with acme at its limit of 1 live job: %v; want ErrLiveLimit", err)
	}
	if j, err := b.st.GetJob(ctx, "acme", failed.ID); err != nil || j.State != store.JobFailed {
		t.Fatalf("after the refused retry: %v %v; want the job still failed", j, err)
	}
	if err := b.st.RetryJobWithin(ctx, "acme", failed.ID, 2); err != nil {
		t.Fatalf("retry below the limit: %v", err)
	}
	if j, err := b.st.GetJob(ctx, "acme", failed.ID); err != nil || j.State != store.JobRunning {
		t.Fatalf("after the retry: %v %v; want running", j, err)
	}
}
