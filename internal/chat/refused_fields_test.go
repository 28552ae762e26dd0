package chat

import (
	"strings"
	"testing"
)

// Fields the router knows and cannot honour are refused before anything is
// stored, naming the field and saying why, where they were dropped and the
// request answered 200: legacy function calling (use tools), stream_options
// without stream (as OpenAI refuses it), outputs other than text, and
// OpenAI's moderation (an unmoderated 200 where the caller asked for a block).
// Found by review.
func TestNormalizeRefusesWhatItCannotHonour(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct{ fields, param, says string }{
		{`"functions":[{"name":"f","parameters":{"type":"object"}}]`, "functions", "tools"},
		{`"functions":[]`, "functions", "tool_choice"},
		{`"function_call":"auto"`, "function_call", "tools and tool_choice"},
		{`"function_call":{"name":"f"}`, "function_call", "tools and tool_choice"},
		{`"stream_options":{"include_usage":true}`, "stream_options", "only allowed when stream is true"},
		{`"stream":false,"stream_options":{}`, "stream_options", "only allowed when stream is true"},
		{`"modalities":["text","audio"]`, "modalities", `modalities[1] is "audio": the router returns text only`},
		{`"modalities":"text"`, "modalities", "array of strings"},
		{`"audio":{"voice":"alloy","format":"mp3"}`, "audio", "text only"},
		{`"web_search_options":{}`, "web_search_options", "no web search"},
		{`"moderation":{"model":"omni-moderation-latest","policy":{"input":{"mode":"block"}}}`, "moderation", "does not run OpenAI's moderation"},
		{`"moderation":{}`, "moderation", "leave moderation out"},
	} {
		_, err := parse(t, `{"model":"m",`+msgs+`,`+c.fields+`}`).Normalize()
		re, ok := err.(*RequestError)
		if !ok || re.Param != c.param || !strings.Contains(re.Message, c.says) {
			t.Errorf("%s: err %v, want param %s saying %q", c.fields, err, c.param, c.says)
		}
	}
	for _, fields := range []string{
		`"functions":null,"function_call":null,"audio":null,"web_search_options":null,"modalities":null,"stream_options":null,"moderation":null`,
		`"modalities":["text"]`, `"modalities":[]`,
		`"stream":true,"stream_options":{"include_usage":true}`,
	} {
		if _, err := parse(t, `{"model":"m",`+msgs+`,`+fields+`}`).Normalize(); err != nil {
			t.Errorf("%s: %v", fields, err)
		}
	}
}
