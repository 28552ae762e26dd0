package race

import (
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// docs/api.md: "A usage count no request to the target can reach (over four
// times its context window plus max_tokens) is replaced by the router's
// count". docs/configuration.md (routes.<name>.models): a model passed
// through in place of a target's is "judged, counted and priced as the
// configured target of that target's provider serving that model: its
// context_window, tokenizer, price". Routing judges it so (sentTo,
// targetFor) and sends a 51k-token prompt for the 128k model through the
// route's 8k target. But usageBound bounds the provider's reported usage by
// the 8k target's own window (4 × (8192 + 1000) = 36,768), so the provider's
// real, billed prompt_tokens (60,000: the model's own tokenizer spends a
// third more on numbers than cl100k_base, docs/prompts.md) is thrown away,
// replaced by the router's lower count and marked estimated: the attempt,
// the job's cost_usd and router_cost_usd_total are under-billed by a
// quarter. The same bound cuts a billed failure's usage (billedOutcome).
func TestUsageBoundIsThePassedThroughModelsWindow(t *testing.T) {
	small := &Target{Model: "llama-small-8k", ContextWindow: 8192, ProviderWindow: 8192,
		Price: &providers.Price{InputPerMTok: 0.05, OutputPerMTok: 0.08}}
	big := &Target{Model: "llama-big-128k", ContextWindow: 131072, ProviderWindow: 8192,
		Price: &providers.Price{InputPerMTok: 0.6, OutputPerMTok: 0.8}}
	targets := map[string]*Target{"groq": small, "groq/llama-big-128k": big}
	r := &Runner{cfg: Config{Targets: targets}}

	var b strings.Builder
	b.WriteString("Sum these numbers: ")
	for i := range 17000 {
		fmt.Fprintf(&b, "%04d ", 1000+i*7%9000)
	}
	sp := &spec{msgs: []providers.Message{{Role: "user", Content: b.String()}}, model: "llama-big-128k", maxTokens: 1000, targets: targets, owner: "acme"}
	in, err := tokens.CountMessages(tokens.Cl100kBase, counted(sp))
	if err != nil {
		t.Fatal(err)
	}
	// Routing sends it: the model sent is judged by its own target's window.
	if d := r.decide(&Route{Providers: []string{"groq"}}, sp)[0]; !d.Eligible {
		t.Fatalf("routing: %+v; want eligible (%d tokens in a window of 131072)", d, in)
	}

	a := &store.Attempt{Provider: "groq", Model: "llama-big-128k"}
	reported := providers.Usage{PromptTokens: in * 4 / 3, CompletionTokens: 12, TotalTokens: in*4/3 + 12}
	if reported.TotalTokens > big.ContextWindow {
		t.Fatalf("fixture: reported %d is over the model's window", reported.TotalTokens)
	}
	resp := &providers.Response{Content: "85123000", FinishReason: "stop", Usage: reported}
	u, _ := answerUsage(small, sp, a, resp)
	if u != reported {
		t.Errorf("llama-big-128k (window 131072) passed through the 8k target: the provider's billed usage %d+%d was recorded as %d+%d (estimated %v): "+
			"it was bounded by the 8k target's window (usageBound = %d), not by the window of the model sent (%d)",
			reported.PromptTokens, reported.CompletionTokens, u.PromptTokens, u.CompletionTokens, u.Estimated, usageBound(small, sp), 4*(131072+1000))
	}
	pe := &providers.Error{Provider: "groq", Kind: providers.KindContentPolicy, Received: true, Usage: &reported}
	if _, billed := billedOutcome(small, sp, a, pe); billed != reported {
		t.Errorf("billed failure: recorded %d+%d (estimated %v), want the provider's %d+%d",
			billed.PromptTokens, billed.CompletionTokens, billed.Estimated, reported.PromptTokens, reported.CompletionTokens)
	}
}
