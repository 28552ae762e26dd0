package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// OpenAI always sends usage.prompt_tokens_details and
// usage.completion_tokens_details, and SDK code reads
// usage.prompt_tokens_details.cached_tokens without a check for null: the
// router left both out when zero. Both are now always there, with every
// member OpenAI names (0 when unknown), in the completion and in the
// stream's usage chunk; the members an OpenAI-compatible provider reports
// (audio, accepted and rejected prediction tokens) are carried. Found by
// review (wchat3).
func TestChatUsageAlwaysNamesTheDetails(t *testing.T) {
	b := setup(t, options{respond: func(_ int, r *providers.Request) providers.Step {
		u := &providers.Usage{PromptTokens: 11, CompletionTokens: 5, TotalTokens: 16}
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "audio") {
			u.PromptTokensDetails = providers.PromptTokensDetails{CachedTokens: 2, AudioTokens: 3}
			u.CompletionTokensDetails = providers.CompletionTokensDetails{ReasoningTokens: 1, AudioTokens: 4,
				AcceptedPredictionTokens: 5, RejectedPredictionTokens: 6}
		}
		return providers.Step{Output: "hello", Usage: u}
	}})
	const (
		zero = `"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
			`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}`
		carried = `"prompt_tokens_details":{"cached_tokens":2,"audio_tokens":3},` +
			`"completion_tokens_details":{"reasoning_tokens":1,"audio_tokens":4,"accepted_prediction_tokens":5,"rejected_prediction_tokens":6}`
	)
	for _, c := range []struct{ prompt, want string }{{"hi", zero}, {"audio please", carried}} {
		body := `{"model":"default","messages":[{"role":"user","content":"` + c.prompt + `"}]`
		plain := b.do(t, "POST", "/v1/chat/completions", acmeKey, body+`}`)
		var got struct {
			Usage json.RawMessage `json:"usage"`
		}
		if plain.status != 200 || json.Unmarshal(plain.raw, &got) != nil || !strings.Contains(string(got.Usage), c.want) {
			t.Errorf("%q plain: status %d, usage %s; want %s", c.prompt, plain.status, got.Usage, c.want)
		}
		streamed := b.do(t, "POST", "/v1/chat/completions", acmeKey, body+`,"stream":true,"stream_options":{"include_usage":true}}`)
		var usage string
		for line := range strings.SplitSeq(string(streamed.raw), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var ch struct {
				Usage json.RawMessage `json:"usage"`
			}
			if json.Unmarshal([]byte(data), &ch) == nil && ch.Usage != nil {
				usage = string(ch.Usage)
			}
		}
		if streamed.status != 200 || !strings.Contains(usage, c.want) {
			t.Errorf("%q streamed: status %d, usage chunk %s; want %s", c.prompt, streamed.status, usage, c.want)
		}
	}
}
