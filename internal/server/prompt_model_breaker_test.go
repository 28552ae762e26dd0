package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Breakers are per provider × model sent (SPEC §10, §15; docs/operations.md
// "Circuit breakers": "Breakers are per provider × model sent"). A prompt
// that sets `model` sends that model in place of its target's own, exactly as
// a chat request naming one of its route's `models` does. Its failures (here
// 404 model_not_found: the provider does not serve the prompt's model) must
// open only that model's breaker. Today they are admitted and counted by the
// target's own breaker (no breaker is made for a prompt's model), so one
// prompt's bad model opens the breaker of the target's own model for every
// tenant and every other prompt and chat request on the route.
func TestPromptModelFailuresDoNotOpenTheTargetsOwnBreaker(t *testing.T) {
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"message":"The model pmodel does not exist","type":"invalid_request_error","code":"model_not_found"}}`)
	}))
	defer llm.Close()

	// The shipped triage prompt, with a model of its own.
	dir := t.TempDir()
	src, _ := filepath.Abs("../../prompts/triage")
	if err := os.MkdirAll(filepath.Join(dir, "triage"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"prompt.yaml", "input.schema.json", "output.schema.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "prompt.yaml" {
			b = []byte(strings.Replace(string(b), "temperature: 0\n", "temperature: 0\nmodel: pmodel\n", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, "triage", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := testdb.New(t, store.Options{})
	cfg := newConfig(t, db, llm.URL, "")
	cfg.PromptsDir = dir
	for i := range cfg.Providers {
		cfg.Providers[i].Breaker.ConsecutiveFailures = 1
	}
	srv, err := server.New(context.Background(), cfg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tenant, ops := httptest.NewServer(srv.Handler), httptest.NewServer(srv.OpsHandler)
	defer tenant.Close()
	defer ops.Close()

	req, _ := http.NewRequest(http.MethodPost, tenant.URL+"/v1/jobs",
		strings.NewReader(`{"prompt":"triage","input":{"subject":"Login","body":"I cannot log in."}}`))
	req.Header.Set("Authorization", "Bearer "+tenantKey)
	req.Header.Set("Idempotency-Key", "prompt-model-404")
	req.Header.Set("Prefer", "wait=60")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"state":"failed"`) || !strings.Contains(string(body), "model_not_found") {
		t.Fatalf("the triage job: %d %s; want it failed with the provider's model_not_found", resp.StatusCode, body)
	}

	_, providers := get(t, ops.URL+"/v1/providers", "")
	var reply struct {
		Providers []struct {
			Name          string `json:"name"`
			Eligible      bool   `json:"eligible"`
			IneligibleWhy string `json:"ineligible_reason"`
			Gate          []any  `json:"gate"`
			Stats         *struct {
				Attempts int64 `json:"attempts"`
				Failed   int64 `json:"failed"`
			} `json:"stats"`
		} `json:"providers"`
	}
	if err := json.Unmarshal([]byte(providers), &reply); err != nil {
		t.Fatalf("/v1/providers: %v: %s", err, providers)
	}
	for _, p := range reply.Providers {
		if p.Name == "llm" && !p.Eligible {
			t.Errorf("target llm (model m) is refused by its breaker (%q) after only the prompt's model pmodel failed: "+
				"the prompt model's failure was counted on the breaker of the target's own model, which now refuses every job and chat request on it",
				p.IneligibleWhy)
		}
	}
	// As for a route's `models`: the prompt's model has a breaker of its own
	// at the target's provider, llm/pmodel, listed after the targets; it is
	// the one the failure opened, and its stats count the attempt, not the
	// target's. The gate judges targets, so it has no entries of its own.
	var names []string
	for _, p := range reply.Providers {
		names = append(names, p.Name)
		switch p.Name {
		case "llm":
			if p.Stats != nil && p.Stats.Attempts > 0 {
				t.Errorf("target llm's stats count %d attempts, want none: the attempt sent pmodel and is its breaker's", p.Stats.Attempts)
			}
		case "llm/pmodel":
			if p.Eligible || !strings.Contains(p.IneligibleWhy, "circuit breaker open") {
				t.Errorf("llm/pmodel is eligible=%v (%q), want refused by its open breaker", p.Eligible, p.IneligibleWhy)
			}
			if p.Stats == nil || p.Stats.Failed != 1 {
				t.Errorf("llm/pmodel's stats %+v, want the one failed attempt", p.Stats)
			}
			if len(p.Gate) != 0 {
				t.Errorf("llm/pmodel has gate entries %v, want none (the gate judges targets)", p.Gate)
			}
		}
	}
	if !slices.Equal(names, []string{"llm", "llm/pmodel"}) {
		t.Errorf("/v1/providers lists %v, want the target llm and the breaker of the prompt's model at its provider, llm/pmodel", names)
	}
	_, m := get(t, ops.URL+"/metrics", "")
	for _, series := range []string{`router_breaker_state{provider="llm/pmodel",state="open"} 1`, `router_breaker_state{provider="llm",state="closed"} 1`} {
		if !strings.Contains(m, series) {
			t.Errorf("/metrics has no %s", series)
		}
	}
}
