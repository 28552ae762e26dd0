package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router conformance run` builds type: anthropic providers: against an
// Anthropic-compatible server answering the references it exits 0; answering
// them wrapped in prose it exits 1, and both runs are recorded.
func TestConformanceRunAnthropicExitCodes(t *testing.T) {
	db := testdb.New(t, store.Options{})
	refs := referenceByInput(t)
	var prose atomic.Bool
	srv := anthropicfake.New(t, func(r anthropicfake.Request) anthropicfake.Reply {
		msgs, _ := r.Body["messages"].([]any)
		last, _ := msgs[len(msgs)-1].(map[string]any)
		blocks, _ := last["content"].([]any)
		text, _ := blocks[len(blocks)-1].(map[string]any)["text"].(string)
		ref, ok := refs[text]
		if !ok {
			return anthropicfake.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "unknown case"}
		}
		if prose.Load() {
			ref = "Sure! " + ref
		}
		return anthropicfake.Reply{Text: ref, InputTokens: 10, OutputTokens: 5}
	})
	cfg := writeConfig(t, db, fmt.Sprintf(`  - name: claude
    type: anthropic
    base_url: %s
    model: claude-test
    max_retries: 0`, srv.URL))
	ctx := context.Background()
	args := []string{"conformance", "run", "--config", cfg, "--suites", suitesDir(t), "--prompt", "triage"}
	if code := run(ctx, args); code != 0 {
		t.Fatalf("reference answers: exit code %d, want 0", code)
	}
	prose.Store(true)
	if code := run(ctx, args); code != 1 {
		t.Fatalf("prose answers: exit code %d, want 1", code)
	}
	var passed, failed int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE passed), count(*) FILTER (WHERE NOT passed AND cases_passed = 0)
		FROM conformance_runs WHERE provider = 'claude' AND prompt = 'triage'`).Scan(&passed, &failed); err != nil || passed != 1 || failed != 1 {
		t.Fatalf("stored runs: %d passing, %d failing (%v); want 1 and 1", passed, failed, err)
	}
}
