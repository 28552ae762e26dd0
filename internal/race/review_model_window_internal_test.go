package race

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// longInvoice is a prompt of about 22,500 tokens: more than gpt-3.5-turbo's
// window of 16,385, far less than gpt-4o's 128,000.
var longInvoice = strings.Repeat("The invoice lists twelve consulting days in March. ", 2500)

// A model passed through in place of a target's (a chat request's, from a
// route's models) is judged with the window of the configured target of the
// same provider serving that model, as it is priced: a prompt that fits
// gpt-4o's window but not gpt-3.5-turbo's is not sent to gpt-3.5-turbo for a
// certain context_length_exceeded, and a request too long for every target
// is answered 400 up front. Before, the target's own model's window was
// used. Found by review.
func TestReviewPassedThroughModelJudgedByItsOwnWindow(t *testing.T) {
	r := &Runner{cfg: Config{Targets: map[string]*Target{
		"openai":               {Model: "gpt-4o", ContextWindow: 128000},
		"openai/gpt-3.5-turbo": {Model: "gpt-3.5-turbo", ContextWindow: 16385},
	}}}
	sp := &spec{model: "gpt-3.5-turbo", maxTokens: 500, msgs: []providers.Message{{Role: "user", Content: longInvoice}}}
	got := r.decide(&Route{Providers: []string{"openai"}}, sp)
	if len(got) != 1 {
		t.Fatalf("decisions %+v", got)
	}
	if got[0].Eligible || !strings.HasPrefix(got[0].Reason, ReasonContextWindow) || !strings.Contains(got[0].Reason, "the window holds 16385") {
		t.Errorf("a ~22.5k-token prompt for gpt-3.5-turbo (configured context_window 16385) was judged to fit: %+v", got[0])
	}
	// The same model asked of the target serving it directly is judged the same.
	if d := r.decide(&Route{Providers: []string{"openai/gpt-3.5-turbo"}}, sp)[0]; d.Eligible || d.PromptTokens != got[0].PromptTokens {
		t.Errorf("through its own target: %+v, want %+v", d, got[0])
	}
}

// A passed-through model no target of the provider configures is judged as
// config judges a route target {provider, model} that sets nothing: with
// the provider's context_window and the tokenizer the model's name chooses,
// not the target's own (another model's: a route target's own window, the
// provider's tokenizer for its own model).
func TestReviewPassedThroughModelWithoutTargetJudgedAsTheProvidersDefault(t *testing.T) {
	r := &Runner{cfg: Config{Targets: map[string]*Target{
		"openai/gpt-4o": {Model: "gpt-4o", ContextWindow: 64000, ProviderWindow: 16385, Encoding: "o200k_base"},
	}}}
	sp := &spec{model: "gpt-3.5-turbo", maxTokens: 500, msgs: []providers.Message{{Role: "user", Content: longInvoice}}}
	d := r.decide(&Route{Providers: []string{"openai/gpt-4o"}}, sp)[0]
	if d.Eligible || !strings.Contains(d.Reason, "the window holds 16385") || d.Encoding != "cl100k_base" {
		t.Errorf("gpt-3.5-turbo through target openai/gpt-4o (own window 64000, provider's 16385): %+v; "+
			"want ineligible by the provider's window, counted with cl100k_base", d)
	}
	// The target's own model keeps the target's own window and tokenizer.
	sp.model = ""
	if d := r.decide(&Route{Providers: []string{"openai/gpt-4o"}}, sp)[0]; !d.Eligible || d.Encoding != "o200k_base" {
		t.Errorf("the target's own model: %+v, want eligible, counted with o200k_base", d)
	}
}

// A passed-through model is counted with the tokenizer of the target that
// serves it, in routing and in the usage estimates alike.
func TestReviewPassedThroughModelCountedWithItsTargetsTokenizer(t *testing.T) {
	r := &Runner{cfg: Config{Targets: map[string]*Target{
		"openai":               {Model: "gpt-4o", ContextWindow: 128000},
		"openai/gpt-3.5-turbo": {Model: "gpt-3.5-turbo", ContextWindow: 16385, Encoding: "o200k_base"},
	}}}
	sp := &spec{model: "gpt-3.5-turbo", msgs: []providers.Message{{Role: "user", Content: longInvoice}}, targets: r.cfg.Targets}
	if d := r.decide(&Route{Providers: []string{"openai"}}, sp)[0]; d.Encoding != "o200k_base" {
		t.Errorf("decision %+v: want counted with the tokenizer target openai/gpt-3.5-turbo sets, o200k_base", d)
	}
	enc, err := targetEncoding(r.cfg.Targets["openai"], sp, &store.Attempt{Provider: "openai", Model: "gpt-3.5-turbo"})
	if err != nil || enc != "o200k_base" {
		t.Errorf("usage estimates of gpt-3.5-turbo on target openai count with %q (%v), want o200k_base", enc, err)
	}
}

// A context-length rejection skips the targets whose window — for the model
// each is sent — is no larger than the rejecter's, for the model it was
// sent: gpt-3.5-turbo rejected by openai (16385) does not skip mistral
// (32000), though openai's own model's window (128000) is larger; and it
// skips azure, whose gpt-3.5-turbo has 16385 though its gpt-4o has 128000.
func TestReviewContextLengthSkipComparesTheWindowsOfTheModelsSent(t *testing.T) {
	r := &Runner{cfg: Config{Targets: map[string]*Target{
		"openai":               {Model: "gpt-4o", ContextWindow: 128000},
		"openai/gpt-3.5-turbo": {Model: "gpt-3.5-turbo", ContextWindow: 16385},
		"azure":                {Model: "gpt-4o", ContextWindow: 128000},
		"azure/gpt-3.5-turbo":  {Model: "gpt-3.5-turbo", ContextWindow: 16385},
		"mistral":              {Model: "mistral-small", ContextWindow: 32000},
	}}}
	sp := &spec{model: "gpt-3.5-turbo", msgs: []providers.Message{{Role: "user", Content: "Summarise the invoice."}}}
	o := r.newOrchestrator(&store.Job{}, &Route{Providers: []string{"openai", "mistral", "azure"}}, sp, slog.New(slog.DiscardHandler))
	if len(o.candidates) != 3 {
		t.Fatalf("candidates %v, decisions %+v: want all three", o.candidates, o.decisions)
	}
	if !o.skipTooLongAfter("openai") {
		t.Fatalf("the rejection changed no decision: %+v", o.decisions)
	}
	if o.used["mistral"] {
		t.Errorf("mistral (window 32000) was skipped after openai's gpt-3.5-turbo (16385) rejected the request: %s", o.reasons["mistral"])
	}
	if !o.used["azure"] {
		t.Errorf("azure's gpt-3.5-turbo (16385) was not skipped")
	}
	for _, d := range o.decisions {
		switch d.Provider {
		case "mistral":
			if !d.Eligible {
				t.Errorf("mistral's decision %+v: want eligible", d)
			}
		case "azure":
			if d.Eligible || !strings.Contains(d.Reason, "window of 16385 tokens is no larger than its 16385") {
				t.Errorf("azure's decision %+v: want skipped, with the windows of gpt-3.5-turbo", d)
			}
		}
	}
}
