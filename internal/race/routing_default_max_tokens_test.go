package race

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

// A request that sets no max_tokens is sent to an Anthropic target with the
// adapter's own (providers[].max_tokens, default 4096), which the Messages
// API requires and counts against the window: a prompt within that many
// tokens of the window is refused (400). Routing counted such a request as
// prompt + 0 and sent it for a certain failure. It counts the default, and
// the ineligibility reason tells the caller to set a smaller max_tokens.
// Found by review.
func TestContextWindowCountsTheTargetsDefaultMaxTokens(t *testing.T) {
	msgs := []providers.Message{{Role: "user", Content: strings.Repeat("alpha beta gamma delta ", 40)}}
	const model = "gpt-4o"
	enc, err := tokens.EncodingForModel("", model)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := tokens.CountMessages(enc, msgs)
	if err != nil {
		t.Fatal(err)
	}
	decide := func(window, defaultMaxTokens, maxTokens int) Decision {
		r := &Runner{cfg: Config{Targets: map[string]*Target{"p": {Model: model, ContextWindow: window, DefaultMaxTokens: defaultMaxTokens}}}}
		return r.decide(&Route{Providers: []string{"p"}}, &spec{msgs: msgs, maxTokens: maxTokens})[0]
	}
	window := prompt + 4000 // the prompt fits, but not beside 4096 more tokens
	for _, c := range []struct {
		name                   string
		window, def, maxTokens int
		eligible               bool
		reason                 string
	}{
		{"no max_tokens: the default is counted", window, 4096, 0, false,
			"plus max_tokens 4096 (the target's default, sent because the request sets none)"},
		{"the reason says what to do", window, 4096, 0, false, "set a smaller max_tokens"},
		{"a negative max_tokens is none", window, 4096, -5, false, "the target's default"},
		{"the request's own max_tokens is counted instead", window, 4096, 100, true, ""},
		{"the default alone fills the window", 4096, 4096, 0, false, ReasonMaxTokensFill + " 4096 (the target's default"},
		{"no default (an OpenAI-compatible target): prompt alone", window, 0, 0, true, ""},
		{"the default fits", prompt + 4096, 4096, 0, true, ""},
	} {
		d := decide(c.window, c.def, c.maxTokens)
		if d.Eligible != c.eligible || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%s (window %d, prompt %d, default %d, max_tokens %d): eligible %v reason %q, want %v %q",
				c.name, c.window, prompt, c.def, c.maxTokens, d.Eligible, d.Reason, c.eligible, c.reason)
		}
	}
}
