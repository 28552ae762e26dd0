package race

import (
	"log/slog"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// A context-length rejection skips a candidate only when the candidate has
// no more room for the prompt (its window less the max_tokens it is sent)
// and counts with the rejecter's tokenizer: the same exact encoding, or
// both estimates.
func TestTooLongSkipComparesRoomCountedWithTheSameTokenizer(t *testing.T) {
	r := &Runner{cfg: Config{Targets: map[string]*Target{
		"claude":  {Model: "claude-sonnet-4-5", ContextWindow: 200000, DefaultMaxTokens: 4096},
		"bedrock": {Model: "claude-sonnet-4-5", ContextWindow: 200000, DefaultMaxTokens: 4096},
		"llama":   {Model: "llama-3.3-70b", ContextWindow: 200000},
		"gpt4o":   {Model: "gpt-4o", ContextWindow: 128000},
		"azure":   {Model: "gpt-4o-2024-08-06", ContextWindow: 128000},
		"gpt4":    {Model: "gpt-4-turbo", ContextWindow: 128000},
		"mistral": {Model: "mistral-large", ContextWindow: 128000},
	}}}
	for _, tc := range []struct {
		name, rejecter string
		skipped        map[string]bool
	}{
		// Both estimates: bedrock's room equals claude's and is skipped;
		// llama is sent no max_tokens, so it has 4096 more room.
		{"estimated rejecter", "claude", map[string]bool{"bedrock": true, "llama": false}},
		// gpt-4o's own tokenizer (o200k_base) refused it: so does every
		// o200k_base count of no more room; gpt-4-turbo counts exactly
		// with cl100k_base, and mistral's count is an estimate.
		{"exact rejecter", "gpt4o", map[string]bool{"azure": true, "gpt4": false, "mistral": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &spec{msgs: []providers.Message{{Role: "user", Content: "Summarise the invoice."}}, owner: "acme"}
			route := &Route{Providers: []string{tc.rejecter}}
			for c := range tc.skipped {
				route.Providers = append(route.Providers, c)
			}
			o := r.newOrchestrator(&store.Job{}, route, sp, slog.New(slog.DiscardHandler))
			if len(o.candidates) != len(route.Providers) {
				t.Fatalf("candidates %v, decisions %+v: want all eligible", o.candidates, o.decisions)
			}
			o.skipTooLongAfter(tc.rejecter)
			for c, want := range tc.skipped {
				if o.used[c] != want {
					t.Errorf("%s after %s rejected the request as too long: skipped %v (%s), want %v", c, tc.rejecter, o.used[c], o.reasons[c], want)
				}
				for _, d := range o.decisions {
					if d.Provider == c && d.Event == "" && d.Eligible == want {
						t.Errorf("%s's decision %+v: want eligible %v", c, d, !want)
					}
				}
			}
		})
	}
}
