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

// A chat call whose job failed while the default conformance gate kept the
// route's fallback out of the race (nobody had run the suite on it) was told
// in its 502 only to retry the job or resend under a new key — both gated
// the same way, to fail again — and the job's error named only the primary:
// the gate's refusal was in routing alone, which next_step reads but the
// chat answer did not. The 502 now says, as next_step does, which targets
// the gate skipped, why, and that a retry helps once they pass.
func TestChatFailedJobSaysConformanceGateSkippedFallbacks(t *testing.T) {
	const body = `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	b := setupGatedChat(t)
	gated := []string{
		"conformance gate",
		"fallback: no passing conformance run for triage@",
		"`router conformance run --provider fallback --prompt triage`",
		"a retry now would be gated the same way",
	}

	r := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "chat-gated-1")
	id := r.header.Get("X-Router-Job-Id")
	_, code, _, msg := openAIErr(r)
	if r.status != http.StatusBadGateway || code != "upstream_failed" || id == "" {
		t.Fatalf("failed job: %d %s, want 502 upstream_failed with X-Router-Job-Id", r.status, r.raw)
	}
	if n := len(b.fallback.Requests()); n != 0 {
		t.Fatalf("the gated fallback was called %d times", n)
	}
	for _, want := range append(gated, "once the router's operator has made them pass, start a new round with POST /v1/jobs/"+id+"/retry",
		"a new Idempotency-Key") {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}

	nokey := b.do(t, http.MethodPost, chatPath, acmeKey, body)
	_, code, _, msg = openAIErr(nokey)
	if nokey.status != http.StatusBadGateway || code != "upstream_failed" || strings.Contains(msg, "Idempotency-Key") {
		t.Fatalf("failed job of a call without a key: %d %q, want 502 upstream_failed and no advice about keys", nokey.status, msg)
	}
	for _, want := range gated {
		if !strings.Contains(msg, want) {
			t.Errorf("message of a call without a key %q does not say %q", msg, want)
		}
	}
}

// setupGatedChat is setupGated's router (a fallback behind the default
// conformance gate, on which no conformance run was ever recorded; a primary
// that fails every call) with its route's raw chat completions gated by the
// triage prompt's results (Route.ConformancePrompt).
func setupGatedChat(t *testing.T) *bundle {
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
