package race

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// A context-length rejection by an Anthropic target skips every other
// target whose context_window is no larger (skipTooLongAfter), whatever
// room the request really has there. Route [claude (200k), o3 (200k)], a
// request that sets no max_tokens: claude is sent its provider's default
// max_tokens of 4096 and counts with Claude's own tokenizer, which the
// router only estimates (cl100k_base: "it can undercount",
// docs/prompts.md). So Claude can refuse a prompt the router counted at
// ~190k as too long. o3 is sent no max_tokens at all, and the router counts
// its prompt exactly (o200k_base is o3's own tokenizer): the prompt fits
// its window with more than 10,000 tokens to spare. Yet o3 is skipped as
// "no larger" and the job fails with context_length_exceeded: a request a
// target of the route would have served is refused, and the caller is
// told to shorten it.
func TestTooLongOnClaudeDoesNotSkipATargetTheRequestFits(t *testing.T) {
	r := &Runner{cfg: Config{Targets: map[string]*Target{
		"claude": {Model: "claude-sonnet-4-5", ContextWindow: 200000, DefaultMaxTokens: 4096},
		"openai": {Model: "o3", ContextWindow: 200000},
	}}}
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 18500) // ~832 KB, under the 1 MiB body limit
	sp := &spec{msgs: []providers.Message{{Role: "user", Content: text}}, owner: "acme"}

	claudeCount, err := tokens.CountMessages(tokens.Cl100kBase, counted(sp))
	if err != nil {
		t.Fatal(err)
	}
	o3Count, err := tokens.CountMessages(tokens.O200kBase, counted(sp))
	if err != nil {
		t.Fatal(err)
	}
	if claudeCount+4096 > 200000 || o3Count > 200000-10000 {
		t.Fatalf("fixture: cl100k count %d (+4096 must fit 200000), o200k count %d (must fit 200000 with 10000 to spare)", claudeCount, o3Count)
	}

	o := r.newOrchestrator(&store.Job{}, &Route{Providers: []string{"claude", "openai"}}, sp, slog.New(slog.DiscardHandler))
	if len(o.candidates) != 2 {
		t.Fatalf("candidates %v, decisions %+v: want both eligible", o.candidates, o.decisions)
	}
	// Claude answers 400 "prompt is too long: 201234 tokens > 200000 maximum".
	o.skipTooLongAfter("claude")
	if o.used["openai"] {
		t.Errorf("o3 was skipped after Claude rejected the request as too long (%s), though the router counts the prompt at %d tokens "+
			"with o3's own tokenizer and o3 is sent no max_tokens: it fits o3's window of 200000 with %d to spare, "+
			"while Claude was judged with its default max_tokens of 4096 and an estimated count of %d",
			o.reasons["openai"], o3Count, 200000-o3Count, claudeCount)
	}
}
