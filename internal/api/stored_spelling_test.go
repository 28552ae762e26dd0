package api_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/jsontext"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A job's input is stored as jsonb, and a job run again from its row (POST
// /v1/jobs/{id}/retry here; recovery and a drain hand-over read it the same
// way) renders its numbers in PostgreSQL's spelling: the first run, from the
// input as sent, renders them in that spelling too, so both runs send the
// provider the same prompt (they sent "1.5E-3" then "0.0015"), and a job
// accepted is held to the render's limits on the text every later run renders
// (rprompt10 F1).
func TestRetryRendersTheNumbersAsTheFirstRun(t *testing.T) {
	var mu sync.Mutex
	var sent []string // the user message of each provider call
	respond := func(_ int, req *providers.Request) providers.Step {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "Amount:") {
				sent = append(sent, m.Content)
			}
		}
		return providers.Step{Output: `{"category":"nope"}`} // invalid: the job fails
	}
	b := setupAmountPrompt(t, respond)
	r := b.create(t, acmeKey, "respelt", `{"prompt":"triage","input":{"subject":"s","body":"b","amount":1.5E-3,"list":[-0,2e1]}}`, "Prefer", "wait=10")
	if r.body["state"] != "failed" {
		t.Fatalf("setup: job is %v (%d %s), want failed", r.body["state"], r.status, r.raw)
	}
	if rr := b.do(t, "POST", "/v1/jobs/"+r.job()+"/retry", acmeKey, "", "Prefer", "wait=10"); rr.body["state"] != "failed" {
		t.Fatalf("retry: %d %s, want the job failed again", rr.status, rr.raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 2 {
		t.Fatalf("%d provider calls with the prompt, want 2: %q", len(sent), sent)
	}
	want := "Amount: 0.0015 [0 20]"
	for i, s := range sent {
		if !strings.Contains(s, want) {
			t.Errorf("run %d sent %q, want %q in it (the stored input's spelling, the same on every run)", i+1, s, want)
		}
	}
}

// setupAmountPrompt is setup's router over a triage prompt whose input
// takes an "amount" and a "list" of numbers, which its user message prints,
// on one scripted provider answering with respond, one attempt per run.
func setupAmountPrompt(t *testing.T, respond func(int, *providers.Request) providers.Step) *bundle {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "triage")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"prompt.yaml", "input.schema.json", "output.schema.json"} {
		raw, err := os.ReadFile(filepath.Join("../../prompts/triage", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit(t, filepath.Join(dir, "input.schema.json"), `"customer_tier": {`,
		`"amount": {"type": "number"}, "list": {"type": "array", "items": {"type": "number"}}, "customer_tier": {`)
	edit(t, filepath.Join(dir, "prompt.yaml"), `Subject: {{ .subject }}`, `Subject: {{ .subject }} Amount: {{ .amount }} {{ .list }}`)
	prompts, err := prompt.LoadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	db := testdb.New(t, store.Options{})
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
		Routes:  map[string]*race.Route{"default": {Providers: []string{"primary"}, MaxInflight: 1, MaxAttempts: 1}},
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

// jsontext.WrittenOut spells each number as PostgreSQL's jsonb gives it
// back (n::jsonb::text on the server the tests run on), for numbers of
// every shape: sign, zero, digits after the point, exponents up and down.
func TestWrittenOutIsPostgreSQLsSpelling(t *testing.T) {
	b := setup(t, options{})
	var nums []string
	for _, m := range []string{"0", "-0", "1", "-9", "10", "-123", "0.5", "0.000", "-0.000", "-1.25", "0.0012", "99.900", "12.50", "100"} {
		nums = append(nums, m)
		for _, exp := range []string{"e0", "E1", "e+2", "e-1", "e-2", "E-7", "e5", "e-12", "e300", "e-300"} {
			nums = append(nums, m+exp)
		}
	}
	var stored []string
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT array_agg(n::jsonb::text ORDER BY o) FROM unnest($1::text[]) WITH ORDINALITY AS u(n, o)`,
		nums).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	for i, n := range nums {
		got, changed := jsontext.WrittenOut(n)
		if got != stored[i] || changed != (n != stored[i]) {
			t.Errorf("WrittenOut(%s) = %.40s (changed %v); PostgreSQL writes %.40s", n, got, changed, stored[i])
		}
	}
}
