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

// unreadGate refuses every gated attempt as conformance.Gate does while it
// cannot read conformance_runs (fails closed): the fallback may well have a
// fresh pass.
type unreadGate struct{}

func (unreadGate) AllowModel(_ context.Context, provider, _ string, p *prompt.Prompt, role string) (bool, string) {
	if p == nil || role == store.RolePrimary {
		return true, ""
	}
	return false, race.GateUnread + " for " + p.ID() + " (read conformance standing of " + provider + " on " + p.ID() + ": timeout: context deadline exceeded)"
}

// A chat call whose primary failed while the conformance gate could not read
// its results (conformance_runs locked by a migration) was told in its 502
// that the fallback has no fresh passing run, that a retry would be gated the
// same way, and to wait for the router's operator — none of it true: the
// refusal clears once the database answers, as the 503 path says
// (Retry-After 2 s). The 502 says so, and that a retry shortly may use it.
func TestChatFailedWhileTheGateCouldNotReadSaysRetryShortly(t *testing.T) {
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
	runner := race.New(race.Config{
		Store: db.Store, Listener: listener, Prompts: prompts, LeaseOwner: "test", Log: log,
		Targets: targets, Routes: map[string]*race.Route{"default": route}, Gate: unreadGate{},
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
	b := &bundle{db: db, srv: srv, primary: primary, fallback: fallback, runner: runner, listener: listener, prompts: prompts, api: apiSrv}

	const body = `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	for _, headers := range [][]string{{"Idempotency-Key", "chat-unread-1"}, nil} {
		r := b.do(t, http.MethodPost, chatPath, acmeKey, body, headers...)
		_, code, _, msg := openAIErr(r)
		if r.status != http.StatusBadGateway || code != "upstream_failed" {
			t.Fatalf("failed job (headers %q): %d %s, want 502 upstream_failed", headers, r.status, r.raw)
		}
		if n := len(fallback.Requests()); n != 0 {
			t.Fatalf("the gated fallback was called %d times", n)
		}
		for _, want := range []string{"fallback: " + race.GateUnread, "a retry in a few seconds may use them"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message (headers %q) %q does not say %q", headers, msg, want)
			}
		}
		for _, wrong := range []string{"have no fresh passing", "would be gated the same way", "has made them pass"} {
			if strings.Contains(msg, wrong) {
				t.Errorf("message (headers %q) says %q of a target whose pass the gate could not read: %q", headers, wrong, msg)
			}
		}
	}
}
