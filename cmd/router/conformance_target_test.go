package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router conformance run --provider p/mini` tests the model of the target
// p/mini, not its provider's own model: every request it makes asks for
// "mini", and the result recorded for p/mini (which the gate reads before
// sending p/mini failover traffic) is about "mini". The provider's own target,
// p, is tested on "big".
func TestConformanceRunTestsTheTargetsModel(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("DATABASE_URL", db.URL)
	refs := referenceByInput(t)
	var mu sync.Mutex
	models := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		models[req.Model]++
		mu.Unlock()
		content, ok := refs[req.Messages[len(req.Messages)-1].Content]
		if !ok {
			http.Error(w, `{"error":{"message":"unknown case"}}`, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
			"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	}))
	defer srv.Close()
	prompts, _ := filepath.Abs("../../prompts")
	cfg := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`database_url: %q
prompts_dir: %q
log: {level: error}
providers:
  - name: p
    type: openai
    base_url: %s/v1
    model: big
    stream: false # the mock answers plain JSON only
    max_retries: 0
routes:
  default:
    targets: [{provider: p}, {provider: p, model: mini}]
conformance: {max_age: 168h, gate: fallbacks}
`, db.URL, prompts, srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := len(mustSuites(t)["triage"].Cases)
	for _, tc := range []struct{ target, model string }{{"p/mini", "mini"}, {"p", "big"}} {
		mu.Lock()
		clear(models)
		mu.Unlock()
		var out, errOut bytes.Buffer
		err := conformanceCommand(context.Background(), []string{"run", "--config", cfg, "--suites", suitesDir(t),
			"--provider", tc.target, "--prompt", "triage", "--json"}, &out, &errOut)
		if err != nil {
			t.Fatalf("%s: %v\n%s\n%s", tc.target, err, out.String(), errOut.String())
		}
		mu.Lock()
		seen := fmt.Sprint(models)
		ok := len(models) == 1 && models[tc.model] == cases
		mu.Unlock()
		if !ok {
			t.Fatalf("%s: requests by model %s, want all %d for %q", tc.target, seen, cases, tc.model)
		}
		var stored string
		if err := db.Pool.QueryRow(context.Background(),
			`SELECT model FROM conformance_runs WHERE provider = $1 AND passed`, tc.target).Scan(&stored); err != nil || stored != tc.model {
			t.Fatalf("%s: stored run's model %q (%v), want %q", tc.target, stored, err, tc.model)
		}
	}
}
