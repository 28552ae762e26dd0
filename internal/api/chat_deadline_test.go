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

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// setupDeadline is setup's router with a route whose deadline is deadline,
// on one scripted provider answering with respond.
func setupDeadline(t *testing.T, deadline time.Duration, respond func(int, *providers.Request) providers.Step) *bundle {
	t.Helper()
	db := testdb.New(t, store.Options{})
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	primary := providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "m1", Respond: respond})
	listener := store.NewListener(db.Pool, log)
	listener.SkipNotificationsOf(db.Store)
	ctx, cancel := context.WithCancel(context.Background())
	go listener.Run(ctx)
	<-listener.Ready()
	runner := race.New(race.Config{
		Store: db.Store, Listener: listener, Prompts: prompts, LeaseOwner: "test", Log: log,
		Targets: map[string]*race.Target{"primary": {Provider: primary, Model: "m1", ContextWindow: 128000, Timeout: time.Minute}},
		Routes:  map[string]*race.Route{"default": {Providers: []string{"primary"}, MaxInflight: 1, MaxAttempts: 4, Deadline: deadline}},
	})
	apiSrv := api.New(api.Config{LeaseOwner: "test", Lease: 30 * time.Second}, api.Deps{
		Store: db.Store, Listener: listener, Prompts: prompts, Routes: map[string]bool{"default": true},
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
	return &bundle{db: db, srv: srv, primary: primary, runner: runner, listener: listener, prompts: prompts, api: apiSrv}
}

// A chat job its route's deadline failed — its provider had begun answering,
// then stalled until the deadline cut it (a known outcome: failed) — is a
// gateway timeout to the caller, 504 deadline_exceeded, naming the deadline
// and how to raise it; not 502 upstream_failed, which says the providers
// failed. Found by review.
func TestChatJobFailedByItsDeadlineIs504(t *testing.T) {
	b := setupDeadline(t, 300*time.Millisecond, func(int, *providers.Request) providers.Step {
		return providers.Step{Output: "hello there", Hang: true, HangAfterBytes: true}
	})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		"Idempotency-Key", "deadline-504")
	_, code, _, msg := openAIErr(r)
	id := r.header.Get("X-Router-Job-Id")
	if r.status != http.StatusGatewayTimeout || code != "deadline_exceeded" {
		t.Fatalf("job failed by its deadline: %d %s, want 504 deadline_exceeded", r.status, r.raw)
	}
	for _, want := range []string{"the job " + id + " failed: the job's deadline of 300ms passed", "routes.default.deadline, 300ms",
		"raise routes.default.deadline", "POST /v1/jobs/" + id + "/retry"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
}

// A job that failed otherwise is still 502 upstream_failed: only a job its
// deadline stopped is a 504.
func TestChatJobFailedByItsProvidersIsStill502WithADeadline(t *testing.T) {
	b := setupDeadline(t, time.Minute, func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} })
	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	if _, code, _, _ := openAIErr(r); r.status != http.StatusBadGateway || code != "upstream_failed" {
		t.Fatalf("job failed by its provider: %d %s, want 502 upstream_failed", r.status, r.raw)
	}
}
