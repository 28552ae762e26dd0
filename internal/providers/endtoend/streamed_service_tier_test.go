package endtoend_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/race"
)

// streamServiceTiers is each chunk's service_tier of an SSE body, in order
// ("" for a chunk without one).
func streamServiceTiers(t *testing.T, sse string) []string {
	t.Helper()
	var tiers []string
	for line := range strings.SplitSeq(sse, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			ServiceTier string `json:"service_tier"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		tiers = append(tiers, c.ServiceTier)
	}
	return tiers
}

// The service_tier the provider answered with was on a non-streamed
// completion only: a streamed caller's chunks carry it too, every one of
// them (the usage chunk included), as OpenAI's stream does; a stream whose
// answer named none carries none.
func TestServiceTierOfTheAnswerReachesAStreamedCaller(t *testing.T) {
	target, _ := wholeAnswerTarget(t, "gpt-4o", func(m map[string]any) (int, string) {
		if m["prompt_cache_key"] == "untiered" {
			return 200, strings.Replace(tieredAnswer, `"service_tier":"flex",`, "", 1)
		}
		return 200, tieredAnswer
	})
	srv, _ := serve(t, map[string]*race.Target{"openai": target}, "openai")
	const ask = `{"model":"default","messages":[{"role":"user","content":"2+2?"}],"stream":true,"stream_options":{"include_usage":true}`
	status, _, sse := postKeyedChat(t, srv.URL, "stream-tier-1", ask+`}`)
	if status != http.StatusOK || !strings.HasSuffix(sse, "data: [DONE]\n\n") {
		t.Fatalf("%d %s", status, sse)
	}
	tiers := streamServiceTiers(t, sse)
	if len(tiers) < 3 {
		t.Fatalf("want the role's, the content's, the finish's and the usage's chunks: %s", sse)
	}
	for i, tier := range tiers {
		if tier != "flex" {
			t.Fatalf("chunk %d has service_tier %q, want the provider's \"flex\": %s", i, tier, sse)
		}
	}
	status, _, sse = postKeyedChat(t, srv.URL, "stream-tier-2", ask+`,"prompt_cache_key":"untiered"}`)
	if status != http.StatusOK || strings.Contains(sse, "service_tier") {
		t.Fatalf("an answer without a service_tier: %d %s", status, sse)
	}
}
