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

const openWhy13 = "circuit breaker open after 5 consecutive failures; probing again in 5s"

// openBreaker13 is a breaker set whose only target's breaker is open.
type openBreaker13 struct{}

func (openBreaker13) Admit(string) (func(race.Outcome), bool, string) { return nil, false, openWhy13 }
func (openBreaker13) State(string) (bool, string)                     { return false, openWhy13 }
func (openBreaker13) AdmitsIn(string) (time.Duration, bool)           { return 5 * time.Second, true }

// noPassGate13 is conformance.Gate under `gate: all` for a target with no
// passing run: it refuses every role, and does not clear by itself.
type noPassGate13 struct{}

const noPassWhy13 = "no passing conformance run for triage@3 with model m1 (run `router conformance run --provider primary --prompt triage`)"

func (noPassGate13) AllowModel(context.Context, string, string, *prompt.Prompt, string) (bool, string) {
	return false, noPassWhy13
}

// docs/chat.md (503 no_eligible_provider): "with Retry-After: the seconds
// until the route's first open breaker probes again (… none when nothing
// says when, e.g. conformance missing, which does not clear by itself …).
// The message … says whether to resend after Retry-After … or that it does
// not clear by itself." Routing asks a target's breaker before the
// conformance gate (race's decideRefusals: the gate is asked only of targets
// the breakers admit), so a target the gate refuses whose breaker is also
// open is explained by its breaker alone: the 503 carries Retry-After and
// tells the caller to resend after it — and the resend, once the breaker
// half-opens, is refused again by the gate, which never clears by itself.
func TestNoEligibleGatedTargetWithOpenBreakerSaysItDoesNotClear(t *testing.T) {
	db := testdb.New(t, store.Options{})
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	primary := providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "m1",
		Respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} }})
	targets := map[string]*race.Target{
		"primary": {Provider: primary, Model: "m1", ContextWindow: 128000, Timeout: time.Minute},
	}
	route := &race.Route{Providers: []string{"primary"}, MaxInflight: 2, MaxAttempts: 4, ConformancePrompt: "triage"}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	listener := store.NewListener(db.Pool, log)
	listener.SkipNotificationsOf(db.Store)
	ctx, cancel := context.WithCancel(context.Background())
	go listener.Run(ctx)
	<-listener.Ready()
	runner := race.New(race.Config{
		Store: db.Store, Listener: listener, Prompts: prompts, LeaseOwner: "test", Log: log,
		Targets: targets, Routes: map[string]*race.Route{"default": route}, Gate: noPassGate13{}, Admission: openBreaker13{},
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
	b := &bundle{db: db, srv: srv, primary: primary, runner: runner, listener: listener, prompts: prompts, api: apiSrv}

	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	_, code, _, msg := openAIErr(r)
	if r.status != http.StatusServiceUnavailable || code != "no_eligible_provider" {
		t.Fatalf("set-up: %d %s, want 503 no_eligible_provider", r.status, r.raw)
	}
	if ra := r.header.Get("Retry-After"); ra != "" || !strings.Contains(msg, "does not clear by itself") || !strings.Contains(msg, "conformance") {
		t.Errorf("503 for a target the conformance gate refuses (no passing run) whose breaker is also open: Retry-After %q, message %q; "+
			"want no Retry-After and the message to say it does not clear by itself (and name the missing conformance run), "+
			"since a resend after the breaker half-opens is refused by the gate again", ra, msg)
	}
}
