package conformance_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

// The context-window stage counted the rendered messages only; routing also
// counts the json_schema schema sent with every call. A target whose window
// lay between the two passed conformance, and routing excluded it from every
// job. The runner now counts what routing counts (tokens.Counted). Found by
// review.
func TestConformanceWindowCountsWhatRoutingCounts(t *testing.T) {
	e := newEnv(t)
	p, err := e.prompts.Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.FormatText() == "" {
		t.Fatal("triage is expected to use json_schema")
	}
	c := e.suites["triage"].Cases[0]
	msgs, err := p.Render(c.InputJSON())
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := tokens.EncodingForModel("", "w-model")
	bare, _ := tokens.CountMessages(enc, msgs)
	routed, _ := tokens.CountMessages(enc, append(append([]providers.Message{}, msgs...), providers.Message{Content: p.FormatText()}))
	if routed <= bare {
		t.Fatalf("schema adds nothing: %d vs %d", routed, bare)
	}
	e.add("w", oracle(e.answers, nil))
	e.targets["w"].ContextWindow = bare + p.MaxTokens // holds the messages, not the schema the router also counts
	rep := e.run(t, conformance.Options{PromptNames: []string{"triage"}})
	r := result(t, rep, "w", "triage")
	first := r.Cases[0]
	if first.Stage != conformance.StageContextWindow {
		t.Fatalf("case %s: stage %q, prompt_tokens %d; routing counts %d prompt tokens + max_tokens %d > window %d, so the router never sends it there",
			first.Name, first.Stage, first.PromptTokens, routed, p.MaxTokens, bare+p.MaxTokens)
	}
	if first.PromptTokens < routed || !strings.Contains(first.Failures[0].Message, "(its messages and response format)") {
		t.Fatalf("case %s: prompt_tokens %d (routing counts at least %d): %v", first.Name, first.PromptTokens, routed, first.Failures)
	}
}
