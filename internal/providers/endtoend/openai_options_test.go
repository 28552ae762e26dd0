package endtoend_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/race"
)

const tieredAnswer = `{"id":"x","object":"chat.completion","created":1700000000,"model":"gpt-4o","service_tier":"flex","choices":[{"index":0,"message":{"role":"assistant","content":"4"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`

// The service_tier the provider answered with reaches the caller's
// completion. Found by review (rchat2 #6).
func TestServiceTierOfTheAnswerReachesTheCaller(t *testing.T) {
	target, _ := wholeAnswerTarget(t, "gpt-4o", func(map[string]any) (int, string) { return 200, tieredAnswer })
	srv, _ := serve(t, map[string]*race.Target{"openai": target}, "openai")
	status, _, raw := postKeyedChat(t, srv.URL, "tier-1", `{"model":"default","messages":[{"role":"user","content":"2+2?"}]}`)
	if status != http.StatusOK || !strings.Contains(raw, `"service_tier":"flex"`) {
		t.Fatalf("%d %s", status, raw)
	}
}

// service_tier, safety_identifier and prompt_cache_key were ignored; they
// reach an OpenAI-compatible provider, and a request without them sends
// none of them. Found by review (rchat2 #6).
func TestOpenAIOptionsReachTheProvider(t *testing.T) {
	target, sent := wholeAnswerTarget(t, "gpt-4o", func(map[string]any) (int, string) { return 200, tieredAnswer })
	srv, _ := serve(t, map[string]*race.Target{"openai": target}, "openai")
	status, _, raw := postKeyedChat(t, srv.URL, "opts-1", `{"model":"default","messages":[{"role":"user","content":"2+2?"}],`+
		`"service_tier":"flex","safety_identifier":"hash-7f3a","prompt_cache_key":"faq-v2"}`)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, raw)
	}
	status, _, raw = postKeyedChat(t, srv.URL, "opts-2", `{"model":"default","messages":[{"role":"user","content":"2+2?"}],"service_tier":"auto"}`)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, raw)
	}
	b := sent()
	if len(b) != 2 || b[0]["service_tier"] != "flex" || b[0]["safety_identifier"] != "hash-7f3a" || b[0]["prompt_cache_key"] != "faq-v2" {
		t.Fatalf("the provider got %v", b)
	}
	for _, m := range []string{"service_tier", "safety_identifier", "prompt_cache_key"} {
		if _, ok := b[1][m]; ok {
			t.Fatalf("a request without %s sent %v", m, b[1])
		}
	}
}

// A request that differs from an earlier one under the same
// Idempotency-Key only in service_tier, safety_identifier or
// prompt_cache_key is another intent (409: its stored intent is what every
// attempt sends); service_tier "auto" (OpenAI's default) and none are one
// intent, and so is a request that sets none of them with the intent stored
// before the router read them. A bad service_tier is a 400 that names the
// values. Found by review (rchat2 #6).
func TestOpenAIOptionsAreTheIntent(t *testing.T) {
	target, sent := wholeAnswerTarget(t, "gpt-4o", func(map[string]any) (int, string) { return 200, tieredAnswer })
	srv, _ := serve(t, map[string]*race.Target{"openai": target}, "openai")
	const ask = `{"model":"default","messages":[{"role":"user","content":"2+2?"}]`
	status, job, raw := postKeyedChat(t, srv.URL, "intent-1", ask+`}`)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, raw)
	}
	if status, again, raw := postKeyedChat(t, srv.URL, "intent-1", ask+`,"service_tier":"auto"}`); status != http.StatusOK || again != job {
		t.Fatalf("service_tier auto under the key of a request without one: %d job %s (want %s) %s", status, again, job, raw)
	}
	for _, other := range []string{`,"service_tier":"flex"}`, `,"safety_identifier":"u-1"}`, `,"prompt_cache_key":"k-1"}`} {
		if status, _, raw := postKeyedChat(t, srv.URL, "intent-1", ask+other); status != http.StatusConflict {
			t.Fatalf("%s under the key of a request without it: %d %s", other, status, raw)
		}
	}
	status, _, raw = postKeyedChat(t, srv.URL, "intent-2", ask+`,"service_tier":"turbo"}`)
	if status != http.StatusBadRequest || !strings.Contains(raw, `"param":"service_tier"`) || !strings.Contains(raw, "auto, default, flex, scale, priority") {
		t.Fatalf("a service_tier OpenAI does not have: %d %s", status, raw)
	}
	if n := len(sent()); n != 1 {
		t.Fatalf("the provider was called %d times, want once", n)
	}
}
