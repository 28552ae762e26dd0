package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
)

// A template that prints the body once for each question renders their sizes
// multiplied: a 21 KB request would render a 20 MB prompt on the request
// path. Render stops at prompt.MaxRenderedBytes, and the job is refused 422
// invalid-input, saying the rendered prompt is too large, the bound, and to
// send a smaller input; nothing is stored.
func TestJobWhoseRenderedPromptIsTooLargeIs422(t *testing.T) {
	b := setup(t, options{})
	dir := filepath.Join(t.TempDir(), "triage")
	if err := os.CopyFS(dir, os.DirFS("../../prompts/triage")); err != nil {
		t.Fatal(err)
	}
	edit(t, filepath.Join(dir, "prompt.yaml"), "      {{ json .body }}", "      {{ range .questions }}{{ json $.body }}{{ end }}")
	edit(t, filepath.Join(dir, "input.schema.json"), `"customer_tier": {`, `"questions": {"type": "array", "items": {"type": "string"}},
    "customer_tier": {`)
	ps, err := prompt.LoadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	runner := race.New(race.Config{Store: b.db.Store, Listener: b.listener, Prompts: ps, LeaseOwner: "looping", Log: log,
		Targets: map[string]*race.Target{"primary": {Provider: b.primary, Model: "m1", ContextWindow: 128000, Timeout: time.Minute}},
		Routes:  map[string]*race.Route{"default": {Providers: []string{"primary"}, MaxInflight: 1, MaxAttempts: 1}}})
	srv := httptest.NewServer(api.New(api.Config{LeaseOwner: "looping", Lease: 30 * time.Second}, api.Deps{
		Store: b.db.Store, Listener: b.listener, Prompts: ps, Routes: map[string]bool{"default": true},
		Exec: runner, Log: log, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}},
	}))
	t.Cleanup(func() {
		srv.Close()
		ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		runner.Stop(ctx)
	})

	questions := make([]string, 1000)
	for i := range questions {
		questions[i] = "q"
	}
	input, _ := json.Marshal(map[string]any{"subject": "s", "body": strings.Repeat("a", 20000), "questions": questions})
	got, err := send(srv.URL+"/v1/jobs", "POST", acmeKey, `{"prompt":"triage","input":`+string(input)+`}`, "Idempotency-Key", "too-large")
	if err != nil {
		t.Fatal(err)
	}
	typ, _ := got.body["type"].(string)
	detail, _ := got.body["detail"].(string)
	if got.status != http.StatusUnprocessableEntity || !strings.HasSuffix(typ, "invalid-input") ||
		!strings.Contains(detail, "the rendered prompt passes 16 MiB (16777216 bytes") || !strings.Contains(detail, "send a smaller input") {
		t.Fatalf("%d %.600s, want 422 invalid-input saying the rendered prompt passes 16 MiB and to send a smaller input", got.status, got.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored, want none", n)
	}
}
