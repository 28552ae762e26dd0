package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// setupGated is setup's router with a fallback behind the default
// conformance gate (conformance.gate: fallbacks), on which no conformance
// run was ever recorded: a new deployment's. The primary fails every call.
// The route's raw chat completions are gated by the triage prompt's results
// (Route.ConformancePrompt).
func setupGated(t *testing.T) *bundle {
	t.Helper()
	db := testdb.New(t, store.Options{})
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	primary := providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "m1",
		Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 503} }})
	fallback := providers.NewScripted(providers.ScriptedConfig{Name: "fallback", Model: "m2",
		Respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} }})
	targets := map[string]*race.Target{
		"primary":  {Provider: primary, Model: "m1", ContextWindow: 128000, Timeout: time.Minute},
		"fallback": {Provider: fallback, Model: "m2", ContextWindow: 128000, Timeout: time.Minute},
	}
	route := &race.Route{Providers: []string{"primary", "fallback"}, MaxInflight: 2, MaxAttempts: 4, HedgeAfter: time.Second, ConformancePrompt: "triage"}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	listener := store.NewListener(db.Pool, log)
	listener.SkipNotificationsOf(db.Store)
	ctx, cancel := context.WithCancel(context.Background())
	go listener.Run(ctx)
	<-listener.Ready()
	gate := conformance.NewGate(db.Store, conformance.GateFallbacks, 168*time.Hour,
		conformance.TargetModels(func(id string) string { return targets[id].Model }))
	runner := race.New(race.Config{
		Store: db.Store, Listener: listener, Prompts: prompts, LeaseOwner: "test", Log: log,
		Targets: targets, Routes: map[string]*race.Route{"default": route}, Gate: gate,
	})
	apiSrv := api.New(api.Config{LeaseOwner: "test", Lease: 30 * time.Second}, api.Deps{
		Store: db.Store, Listener: listener, Prompts: prompts, Routes: map[string]bool{"default": true}, Models: aliases(nil),
		Exec: runner, Log: log, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}, Store: db.Store},
	})
	srv := httptest.NewServer(apiSrv)
	t.Cleanup(func() {
		srv.Close()
		stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		runner.Stop(stopCtx)
		cancel()
	})
	return &bundle{db: db, srv: srv, primary: primary, fallback: fallback, runner: runner, listener: listener, prompts: prompts, api: apiSrv}
}

// A job whose primary failed while the default conformance gate kept its
// fallback out of the race (nobody had run the suite on it: any new
// deployment) was told in next_step only to retry, which would be gated the
// same way and fail again; the gate's refusal sat in routing[1].reason, and
// the error named only the primary. next_step now says the gate skipped the
// fallback, why, which run admits it, and that a retry helps only after it.
// Found in a newcomer's walkthrough.
func TestFailedJobSaysConformanceGateSkippedFallbacks(t *testing.T) {
	b := setupGated(t)
	created := b.create(t, acmeKey, "gated-1", triageBody("gated"), "Prefer", "wait=30")
	id := created.job()
	if created.status != http.StatusCreated || created.body["state"] != store.JobFailed || id == "" {
		t.Fatalf("create: %d %s, want 201 with a failed job", created.status, created.raw)
	}
	if n := len(b.fallback.Requests()); n != 0 {
		t.Fatalf("the gated fallback was called %d times", n)
	}
	step, _ := created.body["next_step"].(string)
	for _, want := range []string{
		"will not try it again by itself",
		"conformance gate",
		"fallback: no passing conformance run for triage@",
		"`router conformance run --provider fallback --prompt triage`",
		"a retry now would be gated the same way",
		"POST /v1/jobs/" + id + "/retry",
	} {
		if !strings.Contains(step, want) {
			t.Errorf("next_step %q does not say %q", step, want)
		}
	}
	if got := b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, ""); got.body["next_step"] != step {
		t.Errorf("GET: next_step %q, want %q", got.body["next_step"], step)
	}
}
