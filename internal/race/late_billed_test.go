package race_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A billed failure (here a content-filtered completion) that arrives after
// its attempt's lease expired and recovery marked it unknown is recorded
// through finishAttempt's late-failure resolution. The provider billed it and
// router_cost_usd_total counts it (res.usage); the attempt must record it too.
func TestLateBilledFailureKeepsUsage(t *testing.T) {
	called, release := make(chan struct{}), make(chan struct{})
	billed := providers.Usage{PromptTokens: 40, CompletionTokens: 7, TotalTokens: 47}
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(called)
				<-release
			}
			return providers.Step{Error: &providers.Error{Kind: providers.KindContentPolicy, Code: "content_filter",
				Message: "output withheld by the provider's content filter", Usage: &billed, ResponseID: "resp-late", ResponseModel: "primary-model"}}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	ctx := context.Background()
	job := b.submit(t)
	<-called
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second', lease_owner = NULL
		WHERE job_id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	close(release) // the billed, filtered answer arrives only now
	deadline := time.Now().Add(10 * time.Second)
	var p *store.Attempt
	for {
		p = attemptBy(b.job(t, job.ID), "primary")
		if p.State == store.AttemptFailed || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if p.State != store.AttemptFailed {
		t.Fatalf("primary %s, want failed by its late answer", p.State)
	}
	var u providers.Usage
	if err := json.Unmarshal(p.Usage, &u); err != nil || u != billed {
		t.Fatalf("late billed failure's usage %s (%v), want %+v; provider_response_id %v", p.Usage, err, billed, p.ProviderResponseID)
	}
}
