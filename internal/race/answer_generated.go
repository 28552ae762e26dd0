package race

import "github.com/routerhq/router/internal/providers"

// generatedTexts is what the provider generated, and billed, for resp: its
// reasoning, its content, the text and tool calls its adapter cut away at a
// stop sequence it applied itself (providers.Response.CutAtStop: the
// Anthropic adapter's whitespace-only stops) and its tool calls. An estimate
// of the answer's output counts them all: the adapter estimates the output of
// an Anthropic stream without an output count from the whole answer before
// the cut, and the race's recount (answerEstimate) of the cut content alone
// replaced it with a fraction — a 2,000-word answer cut after its first line
// was recorded and priced as a few output tokens.
func generatedTexts(resp *providers.Response) []string {
	return []string{resp.ReasoningContent, resp.Content, resp.CutAtStop, string(resp.ToolCalls)}
}

// generatedAny reports whether the provider generated any output for resp
// (generatedTexts).
func generatedAny(resp *providers.Response) bool {
	for _, s := range generatedTexts(resp) {
		if s != "" {
			return true
		}
	}
	return false
}
