package ops_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// An attempt that sent a route's `models` name (an alias) in place of its
// target's own model is stored under its target's id, and the dashboard
// showed only that: "#1 openai: model_not_found (HTTP 404)" read as the
// target's own model gone, while gpt-4o was never sent and breaker
// openai/gpt-4o-mini, not openai, counted the failure. The page now names
// the model sent and its breaker, in the attempt's label and in the job's
// failure summary; an attempt of the target's own model reads as before.
// Found by review.
func TestDashboardNamesTheModelAnAttemptSent(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	input := json.RawMessage(`{"a":1}`)
	fp, _ := store.Fingerprint("chat", "", "", input)
	j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "chat", IdempotencyKey: "alias", Fingerprint: fp, Route: "chat", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		provider, model, role, kind string
		status                      int
	}{
		{"openai", "gpt-4o-mini", store.RolePrimary, "model_not_found", 404}, // the alias, on its own breaker
		{"openai", "gpt-4o", store.RoleRetry, "unavailable", 503},            // the target's own model
		{"local", "llama-alias", store.RoleFailover, "model_not_found", 404}, // another model, no breaker of its own
	} {
		at, err := db.Store.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: a.provider, Model: a.model, Role: a.role, LeaseOwner: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Store.MarkAttemptRunning(ctx, at.ID); err != nil {
			t.Fatal(err)
		}
		out := store.AttemptOutcome{State: store.AttemptFailed, Error: map[string]any{"kind": a.kind, "status": a.status}}
		if err := db.Store.FinishAttempt(ctx, at.ID, out); err != nil {
			t.Fatal(err)
		}
	}
	if state, err := db.Store.SettleJob(ctx, j.ID, "every attempt failed"); err != nil || state != store.JobFailed {
		t.Fatalf("settle: %s, %v", state, err)
	}
	own := map[string]string{"openai": "gpt-4o", "local": "llama3"}
	srv := httptest.NewServer(ops.New(ops.Config{Providers: []string{"openai", "openai/gpt-4o-mini", "local"},
		SentBreakers: []store.SentBreaker{{Provider: "openai", Model: "gpt-4o-mini", Breaker: "openai/gpt-4o-mini"}},
		TargetModels: func(target string) string { return own[target] }}, db.Store, nil, nil))
	defer srv.Close()
	job := jobOn(t, getPage(t, srv.URL+"/dashboard"), j.ID)

	for _, want := range []string{
		// The failure summary.
		"#1 openai (model gpt-4o-mini, breaker openai/gpt-4o-mini): model_not_found (HTTP 404); #2 openai: unavailable (HTTP 503); #3 local (model llama-alias): model_not_found (HTTP 404)",
		// The attempts' labels.
		`data-model="gpt-4o-mini" data-breaker="openai/gpt-4o-mini"`,
		`<span class="sent note">model gpt-4o-mini, breaker openai/gpt-4o-mini</span>`,
		`data-model="llama-alias"`,
		`<span class="sent note">model llama-alias</span>`,
	} {
		if !strings.Contains(job, want) {
			t.Errorf("the job lacks %q:\n%s", want, job)
		}
	}
	if strings.Contains(job, "model gpt-4o<") || strings.Contains(job, `data-model="gpt-4o"`) {
		t.Errorf("the attempt of the target's own model names it as if sent in its place:\n%s", job)
	}
}
