package chat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// The provider's usage details and system_fingerprint reach the completion
// (they were dropped); an answer without them has system_fingerprint null and
// both detail objects with zeros (OpenAI always sends them:
// TestCompletionUsageAlwaysNamesTheDetails). Found by review.
func TestJudgeCarriesUsageDetailsAndSystemFingerprint(t *testing.T) {
	resp := &providers.Response{Content: "hi", Model: "m", Created: time.Unix(1700000000, 0), FinishReason: "stop",
		Usage: providers.Usage{PromptTokens: 11, CompletionTokens: 5, TotalTokens: 16}}
	raw, violations := Judge(&Input{}, nil, "job-1", resp)
	if len(violations) > 0 {
		t.Fatal(violations)
	}
	const before = `{"id":"chatcmpl-job1","object":"chat.completion","created":1700000000,"model":"m",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16,` +
		`"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
		`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},` +
		`"system_fingerprint":null}`
	if string(raw) != before {
		t.Errorf("an answer without details stored as\n%s\nwant\n%s", raw, before)
	}
	resp.SystemFingerprint = "fp_1"
	resp.Usage.PromptTokensDetails.CachedTokens, resp.Usage.CompletionTokensDetails.ReasoningTokens = 8, 3
	raw, violations = Judge(&Input{}, nil, "job-1", resp)
	if len(violations) > 0 {
		t.Fatal(violations)
	}
	c, err := DecodeCompletion(raw)
	if err != nil || c.SystemFingerprint == nil || *c.SystemFingerprint != "fp_1" || providers.Usage(c.Usage) != resp.Usage {
		t.Fatalf("completion %s (%v)", raw, err)
	}
	var u map[string]json.RawMessage
	_ = json.Unmarshal(raw, &struct {
		Usage *map[string]json.RawMessage `json:"usage"`
	}{&u})
	if string(u["prompt_tokens_details"]) != `{"cached_tokens":8,"audio_tokens":0}` ||
		string(u["completion_tokens_details"]) != `{"reasoning_tokens":3,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}` ||
		!strings.Contains(string(raw), `"system_fingerprint":"fp_1"`) {
		t.Errorf("completion %s", raw)
	}
}
