package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// mixedFaults fail fast on the OpenAI-compatible primary (faultLLM); the
// fallback target is the Anthropic provider serving model+"-f".
var mixedFaults = []fault{
	{model: "down500", answeredBy: "down500-f", maxPrimary: 2, maxFallback: 1},                 // persistent 500: one retry, then failover
	{model: "reset", answeredBy: "reset-f", maxPrimary: 2, maxFallback: 1},                     // TCP reset before any byte
	{model: "cut", stream: true, answeredBy: "cut-f", maxPrimary: 1, maxFallback: 1},           // stream cut mid-answer
	{model: "malformed", answeredBy: "malformed-f", maxPrimary: 1, maxFallback: 1},             // undecodable chunk
	{model: "overloaded", answeredBy: "overloaded", maxPrimary: 2, maxFallback: 0},             // Anthropic primary: 529 once, retried on it
	{model: "overloaded-stream", stream: true, answeredBy: "overloaded-stream", maxPrimary: 2}, // the same, the caller streaming
}

// anthropicFaultFake is an Anthropic Messages API server answering model with
// answerFor(model), except that an "overloaded*" model's first call is a 529
// overloaded_error (no retry-after, as Anthropic sends it).
func anthropicFaultFake(t *testing.T) *anthropicfake.Server {
	var mu sync.Mutex
	counts := map[string]int{}
	return anthropicfake.New(t, func(r anthropicfake.Request) anthropicfake.Reply {
		m, _ := r.Body["model"].(string)
		mu.Lock()
		counts[m]++
		n := counts[m]
		mu.Unlock()
		if strings.HasPrefix(m, "overloaded") && n == 1 {
			return anthropicfake.Reply{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"}
		}
		u := usageFor(m)
		return anthropicfake.Reply{Text: answerFor(m), Model: m, InputTokens: u["prompt_tokens"], OutputTokens: u["completion_tokens"]}
	})
}

// A route may mix OpenAI-compatible and Anthropic targets: with only providers
// and targets configured (every deadline, retry and hedge the default), a
// failing OpenAI-compatible primary fails over to the Anthropic fallback, whose
// whole answer the caller gets; an Anthropic primary answering 529 once is
// retried on the same target.
func TestMixedRouteAnthropicFailover(t *testing.T) {
	t.Parallel()
	llm := newFaultLLM(t)
	claude := anthropicFaultFake(t)
	db := testdb.New(t, store.Options{})
	addr := freeAddr(t)
	var b strings.Builder
	fmt.Fprintf(&b, `listen: %s
ops_listen: 127.0.0.1:0
database_url: %q
api_keys: [{owner: acme, key_env: E2E_API_KEY}]
providers:
  - {name: primary, type: openai, base_url: %q}
  - {name: claude, type: anthropic, base_url: %q, model: claude-test}
log: {level: warn}
routes:
`, addr, db.URL, llm.url(), claude.URL)
	for _, f := range mixedFaults {
		if strings.HasPrefix(f.model, "overloaded") {
			fmt.Fprintf(&b, "  %s: {targets: [{provider: claude, model: %s}, {provider: primary, model: %s-f}]}\n", f.model, f.model, f.model)
		} else {
			fmt.Fprintf(&b, "  %s: {targets: [{provider: primary, model: %s}, {provider: claude, model: %s-f}]}\n", f.model, f.model, f.model)
		}
	}
	router := launch(t, addr, b.String())

	claudeCalls := func(model string) int {
		n := 0
		for _, r := range claude.Requests() {
			if r.Body["model"] == model {
				n++
			}
		}
		return n
	}
	for _, f := range mixedFaults {
		t.Run(f.model, func(t *testing.T) {
			t.Parallel()
			msgs := []map[string]string{{"role": "user", "content": "Say the sentence about the fox."}}
			got := chatCall(t, router, f.model, msgs, f.stream)
			if got.status != http.StatusOK || got.content != answerFor(f.answeredBy) {
				t.Errorf("status %d content %q (error %q), want the whole answer of %s", got.status, got.content, got.message, f.answeredBy)
			}
			if !f.stream {
				want := usageFor(f.answeredBy)
				if got.usage["prompt_tokens"] != want["prompt_tokens"] || got.usage["completion_tokens"] != want["completion_tokens"] {
					t.Errorf("usage %v, want the answering attempt's %v", got.usage, want)
				}
			}
			primary, fallback := llm.count(f.model), claudeCalls(f.model+"-f")
			if f.answeredBy == f.model+"-f" && fallback != 1 {
				t.Errorf("the Anthropic fallback was called %d times, want 1", fallback)
			}
			if strings.HasPrefix(f.model, "overloaded") {
				// The Anthropic target is the primary: 529, then its answer on the
				// same target (max_retries defaults to 1); the fallback is not called.
				primary, fallback = claudeCalls(f.model), llm.count(f.model+"-f")
				if primary != 2 {
					t.Errorf("Anthropic primary called %d times, want 2 (the 529, then the retry)", primary)
				}
			}
			if primary < 1 || primary > f.maxPrimary || fallback > f.maxFallback {
				t.Errorf("calls: primary %d (max %d), fallback %d (max %d)", primary, f.maxPrimary, fallback, f.maxFallback)
			}
		})
	}
}
