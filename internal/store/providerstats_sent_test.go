package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// Attempts that sent a route's model in place of their target's own are
// counted by that model's breaker (breakers per provider × model sent), and
// /v1/providers shows that breaker beside the target's: their stats were
// counted under the target, so one tenant's alias failures showed as the
// target's and the alias breaker's row had none. Found by review.
func TestProviderStatsCountSentModelsUnderTheirBreaker(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	job, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "stats-sent", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	finish := func(model, state string) {
		t.Helper()
		a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: job.ID, Provider: "p1", Model: model, Role: store.RoleRetry, LeaseOwner: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: state, LatencyMS: 10,
			Error: map[string]any{"kind": "unavailable", "fault": "provider"}}); err != nil {
			t.Fatal(err)
		}
	}
	finish("own-model", store.AttemptLost)
	finish("alias", store.AttemptFailed)
	finish("alias", store.AttemptFailed)
	finish("unlisted", store.AttemptLost) // no breaker of its own: the target's counts it

	stats, err := b.st.ProviderStats(ctx, time.Hour, store.SentBreaker{Provider: "p1", Model: "alias", Breaker: "p1-alias"})
	if err != nil {
		t.Fatal(err)
	}
	if p1 := stats["p1"]; p1.Attempts != 2 || p1.Succeeded != 2 || p1.Failed != 0 {
		t.Errorf("p1 %+v; want its own model's and the unlisted model's answers, 2 succeeded", p1)
	}
	if al := stats["p1-alias"]; al.Attempts != 2 || al.Failed != 2 {
		t.Errorf("p1-alias %+v; want the alias's 2 failures", al)
	}
	if all, err := b.st.ProviderStats(ctx, time.Hour); err != nil || all["p1"].Attempts != 4 {
		t.Errorf("without sent breakers: %+v, %v; want all 4 under p1", all["p1"], err)
	}
}
