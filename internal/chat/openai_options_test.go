package chat

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

func intentOf(t *testing.T, body string) string {
	t.Helper()
	in, err := parse(t, body).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// service_tier, safety_identifier and prompt_cache_key were ignored: they
// are stored in the intent (and so sent) when set. A request without them,
// or with service_tier "auto" (OpenAI's default, as a request without one
// was ignored before), keeps its intent byte for byte: its fingerprint, and
// so an Idempotency-Key's replay across the upgrade
// (TestIntentOfARequestWithoutTheNewFieldsIsUnchanged holds the rest). A
// request that differs in one of them is another intent. Found by review
// (rchat2 #6).
func TestOpenAIOptionsInTheIntent(t *testing.T) {
	const base = `{"model":"m","messages":[{"role":"user","content":"hi"}]`
	plain := intentOf(t, base+`}`)
	if want := `{"messages":[{"role":"user","content":"hi"}]}`; plain != want {
		t.Fatalf("intent without the options %s, want %s", plain, want)
	}
	for _, same := range []string{`,"service_tier":"auto"}`, `,"service_tier":null,"safety_identifier":null,"prompt_cache_key":null}`,
		`,"safety_identifier":"","prompt_cache_key":""}`} {
		if got := intentOf(t, base+same); got != plain {
			t.Errorf("%s: intent %s, want %s", same, got, plain)
		}
	}
	seen := map[string]string{plain: "none"}
	for _, other := range []string{`,"service_tier":"flex"}`, `,"service_tier":"priority"}`, `,"service_tier":"default"}`, `,"service_tier":"scale"}`,
		`,"safety_identifier":"u-1"}`, `,"safety_identifier":"u-2"}`, `,"prompt_cache_key":"u-1"}`} {
		got := intentOf(t, base+other)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: the same intent as %s: %s", other, prev, got)
		}
		seen[got] = other
	}
	in, _ := parse(t, base+`,"service_tier":"flex","safety_identifier":"hash-7","prompt_cache_key":"faq-v2"}`).Normalize()
	if in.ServiceTier != "flex" || in.SafetyIdentifier != "hash-7" || in.PromptCacheKey != "faq-v2" {
		t.Fatalf("input %+v", in)
	}
}

func TestOpenAIOptionsRefused(t *testing.T) {
	const base = `{"model":"m","messages":[{"role":"user","content":"hi"}]`
	for body, want := range map[string]struct{ param, says string }{
		`,"service_tier":"fast"}`: {"service_tier", `"fast" is not one of auto, default, flex, scale, priority`},
		`,"service_tier":""}`:     {"service_tier", "not one of auto, default, flex, scale, priority"},
		`,"service_tier":"Flex"}`: {"service_tier", "not one of"},
		`,"safety_identifier":"` + strings.Repeat("é", 129) + `"}`:          {"safety_identifier", "129 characters long; at most 128"},
		`,"prompt_cache_key":"` + strings.Repeat("k", 100) + `"}`:           {"prompt_cache_key", "100 characters long; at most 64"},
		`,"safety_identifier":"a\nb"}`:                                      {"safety_identifier", "unprintable character (U+000A at byte 1)"},
		`,"prompt_cache_key":"a\u0000"}`:                                    {"prompt_cache_key", "unprintable character (U+0000"},
		`,"prompt_cache_key":"\u200b"}`:                                     {"prompt_cache_key", "unprintable"},
		`,"service_tier":"` + strings.Repeat("x", 5000) + `","n":1}`:        {"service_tier", "…"},
		`,"safety_identifier":"` + strings.Repeat("é", 64) + `","n":2}`:     {"n", "n=1"},
		`,"safety_identifier":"` + strings.Repeat("é", 64) + `","top_p":2}`: {"top_p", "top_p"},
	} {
		_, err := parse(t, base+body).Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != want.param || !strings.Contains(re.Message, want.says) {
			t.Errorf("%s: %v, want param %s saying %q", body, err, want.param, want.says)
		}
		if re != nil && len(re.Message) > 600 {
			t.Errorf("%s: a %d-byte message", body[:40], len(re.Message))
		}
	}
}

// The provider's service_tier and reasoning_content reach the completion;
// neither is judged: an answer with reasoning and no content is still
// empty, and a json_object answer is its content alone.
func TestJudgeCarriesReasoningAndServiceTier(t *testing.T) {
	in := &Input{Messages: []providers.Message{{Role: "user", Content: "2+2?"}}}
	resp := &providers.Response{Content: "4", ReasoningContent: "2+2 is 4", ServiceTier: "flex", FinishReason: "stop", Model: "m", Created: time.Unix(1, 0)}
	out, bad := Judge(in, nil, "j", resp)
	if bad != nil {
		t.Fatal(bad)
	}
	c, err := DecodeCompletion(out)
	if err != nil {
		t.Fatal(err)
	}
	if c.ServiceTier != "flex" || c.Choices[0].Message.ReasoningContent != "2+2 is 4" || c.Choices[0].Message.Text() != "4" {
		t.Fatalf("%s", out)
	}
	resp.Content = ""
	if _, bad := Judge(in, nil, "j", resp); len(bad) != 1 || bad[0].Rule != "empty" {
		t.Fatalf("reasoning without an answer: %v", bad)
	}
	// Without either, the completion is as before.
	resp.Content, resp.ReasoningContent, resp.ServiceTier = "4", "", ""
	out, _ = Judge(in, nil, "j", resp)
	if strings.Contains(string(out), "reasoning_content") || strings.Contains(string(out), "service_tier") {
		t.Fatalf("%s", out)
	}
	in.ResponseFormat = &ResponseFormat{Type: "json_object"}
	resp.Content, resp.ReasoningContent = `{"a":1}`, "not JSON at all {"
	if _, bad := Judge(in, nil, "j", resp); bad != nil {
		t.Fatalf("reasoning judged as the answer: %v", bad)
	}
}
