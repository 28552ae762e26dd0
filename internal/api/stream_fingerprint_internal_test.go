package api

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
)

// Every chunk of a streamed answer carries the completion's
// system_fingerprint (null when the provider sent none), as OpenAI's chunks
// do, and the usage chunk carries the usage details. Found by review.
func TestStreamCarriesSystemFingerprintAndUsageDetails(t *testing.T) {
	fp, content := "fp_1", "hello"
	c := &chat.Completion{ID: "chatcmpl-1", Object: "chat.completion", Created: 1700000000, Model: "m", SystemFingerprint: &fp,
		Choices: []chat.Choice{{Message: chat.AssistantMessage{Role: "assistant", Content: &content}, FinishReason: "stop"}},
		Usage: chat.Usage{PromptTokens: 11, CompletionTokens: 5, TotalTokens: 16,
			PromptTokensDetails: providers.PromptTokensDetails{CachedTokens: 8}}}
	rec := httptest.NewRecorder()
	if err := writeStreamBody(rec, newStreamWrites(rec, time.Minute), c, true); err != nil {
		t.Fatal(err)
	}
	events := 0
	for line := range strings.SplitSeq(rec.Body.String(), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		events++
		var ch struct {
			SystemFingerprint *string          `json:"system_fingerprint"`
			Usage             *json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil || ch.SystemFingerprint == nil || *ch.SystemFingerprint != "fp_1" {
			t.Errorf("chunk %s: want system_fingerprint fp_1", data)
		}
		if ch.Usage != nil && !strings.Contains(string(*ch.Usage), `"prompt_tokens_details":{"cached_tokens":8,"audio_tokens":0}`) {
			t.Errorf("usage chunk %s: want the details", data)
		}
	}
	if events < 3 {
		t.Fatalf("%d events: %s", events, rec.Body.String())
	}
}
