package chat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// OpenAI always sends usage.prompt_tokens_details and
// usage.completion_tokens_details with every member, and SDK code reads
// usage.prompt_tokens_details.cached_tokens without a check for null: the
// completion left both out when zero, and carried only cached_tokens and
// reasoning_tokens of them. A completion stored before (details left out)
// is answered again with them; the router's own count keeps "estimated".
// Found by review (wchat3).
func TestCompletionUsageAlwaysNamesTheDetails(t *testing.T) {
	const zero = `"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
		`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}`
	resp := &providers.Response{Content: "hi", Model: "m", Created: time.Unix(1700000000, 0), FinishReason: "stop",
		Usage: providers.Usage{PromptTokens: 11, CompletionTokens: 5, TotalTokens: 16}}
	raw, violations := Judge(&Input{}, nil, "job-1", resp)
	if len(violations) > 0 {
		t.Fatal(violations)
	}
	if want := `"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16,` + zero + `}`; !strings.Contains(string(raw), want) {
		t.Errorf("completion %s\nwant %s", raw, want)
	}

	resp.Usage = providers.Usage{PromptTokens: 11, CompletionTokens: 5, TotalTokens: 16,
		PromptTokensDetails: providers.PromptTokensDetails{CachedTokens: 2, AudioTokens: 3},
		CompletionTokensDetails: providers.CompletionTokensDetails{ReasoningTokens: 1, AudioTokens: 4,
			AcceptedPredictionTokens: 5, RejectedPredictionTokens: 6}}
	raw, violations = Judge(&Input{}, nil, "job-1", resp)
	if len(violations) > 0 {
		t.Fatal(violations)
	}
	const carried = `"prompt_tokens_details":{"cached_tokens":2,"audio_tokens":3},` +
		`"completion_tokens_details":{"reasoning_tokens":1,"audio_tokens":4,"accepted_prediction_tokens":5,"rejected_prediction_tokens":6}`
	if !strings.Contains(string(raw), carried) {
		t.Errorf("completion %s\nwant %s", raw, carried)
	}
	c, err := DecodeCompletion(raw)
	if err != nil || providers.Usage(c.Usage) != resp.Usage {
		t.Fatalf("decoded usage %+v (%v), want %+v", c.Usage, err, resp.Usage)
	}

	// As stored before the details were always written, and estimated.
	old := `{"id":"chatcmpl-job1","object":"chat.completion","created":1700000000,"model":"m",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16,"estimated":true},"system_fingerprint":null}`
	c, err = DecodeCompletion(json.RawMessage(old))
	if err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(c)
	if want := `"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16,` + zero + `,"estimated":true}`; err != nil || !strings.Contains(string(again), want) {
		t.Errorf("a stored completion answered again as %s (%v)\nwant %s", again, err, want)
	}
}
