package race

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

// The context-window check holds whatever max_tokens a stored job carries: a
// negative one asks for nothing (it does not shrink the prompt's need), and a
// huge one does not overflow into "fits".
func TestContextWindowCheckIgnoresNegativeAndHugeMaxTokens(t *testing.T) {
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
	decide := func(window, maxTokens int) Decision {
		r := &Runner{cfg: Config{Targets: map[string]*Target{"p": {Model: model, ContextWindow: window}}}}
		return r.decide(&Route{Providers: []string{"p"}}, &spec{msgs: msgs, maxTokens: maxTokens})[0]
	}
	for _, c := range []struct {
		name              string
		window, maxTokens int
		eligible          bool
		reason            string
	}{
		{"negative max_tokens does not shrink the prompt", prompt - 1, -1_000_000, false, "context window too small"},
		{"most negative max_tokens", prompt - 1, math.MinInt, false, "context window too small"},
		{"negative max_tokens counts as none", prompt, -1_000_000, true, ""},
		{"huge max_tokens does not overflow", 128000, math.MaxInt, false, "max_tokens"},
		{"max_tokens as large as the window", 128000, 128000, false, "max_tokens 128000 alone"},
		{"prompt plus max_tokens exactly fill the window", 128000, 128000 - prompt, true, ""},
		{"one token more than the window", 128000, 128000 - prompt + 1, false, "context window too small"},
	} {
		d := decide(c.window, c.maxTokens)
		if d.Eligible != c.eligible || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%s (window %d, prompt %d, max_tokens %d): eligible %v reason %q, want %v %q",
				c.name, c.window, prompt, c.maxTokens, d.Eligible, d.Reason, c.eligible, c.reason)
		}
	}
}

func TestWithinNeverOverflows(t *testing.T) {
	for _, c := range []struct {
		prompt, maxTokens, window int
		want                      bool
	}{
		{10, 90, 100, true},
		{11, 90, 100, false},
		{10, math.MaxInt, 100, false},
		{math.MaxInt, 1, math.MaxInt, false},
		{math.MaxInt - 1, 1, math.MaxInt, true},
		{0, 0, 0, true},
	} {
		if got := within(c.prompt, c.maxTokens, c.window); got != c.want {
			t.Errorf("within(%d, %d, %d) = %v, want %v", c.prompt, c.maxTokens, c.window, got, c.want)
		}
	}
}

// The byte bound that lets routing skip counting stays above the count for
// every part of a message the count includes: a small message carrying a
// long tool call, a tool call id or a name must not pass as fitting a window
// its tokens overflow.
func TestByteBoundCoversEveryCountedPart(t *testing.T) {
	args := `{"query":"` + strings.Repeat("lorem ipsum dolor sit amet ", 400) + `"}`
	calls := []byte(`[{"id":"call_1","type":"function","function":{"name":"search","arguments":` + strconvQuote(args) + `}}]`)
	for _, msgs := range [][]providers.Message{
		{{Role: "assistant", Content: "", ToolCalls: calls}},
		{{Role: "tool", Content: "ok", ToolCallID: strings.Repeat("call-id-", 500)}},
		{{Role: "user", Content: "hi", Name: strings.Repeat("someone_", 300)}},
	} {
		for _, enc := range []string{"cl100k_base", "o200k_base"} {
			n, err := tokens.CountMessages(enc, msgs)
			if err != nil {
				t.Fatal(err)
			}
			if b := byteBound(msgs); b < n {
				t.Errorf("%s: byte bound %d below the count %d for %+v", enc, b, n, msgs[0].Role)
			}
		}
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A chat request's tools are sent with every call and count toward the
// provider's context window: a short conversation with long tool definitions
// does not fit a window its definitions overflow.
func TestContextWindowCountsTools(t *testing.T) {
	msgs := []providers.Message{{Role: "user", Content: "hi"}}
	tools := json.RawMessage(`[{"type":"function","function":{"name":"search","description":` +
		strconvQuote(strings.Repeat("lorem ipsum dolor sit amet ", 400)) + `,"parameters":{"type":"object"}}}]`)
	r := &Runner{cfg: Config{Targets: map[string]*Target{"p": {Model: "gpt-4o", ContextWindow: 1000}}}}
	d := r.decide(&Route{Providers: []string{"p"}}, &spec{msgs: msgs, tools: tools, maxTokens: 100})[0]
	if d.Eligible || !strings.Contains(d.Reason, "context window too small") {
		t.Fatalf("eligible %v reason %q: want the tools' tokens counted", d.Eligible, d.Reason)
	}
	if d := r.decide(&Route{Providers: []string{"p"}}, &spec{msgs: msgs, maxTokens: 100})[0]; !d.Eligible {
		t.Fatalf("without tools: %q", d.Reason)
	}
}
