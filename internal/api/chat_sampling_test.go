package api_test

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// top_p and stop are passed to the provider (they were dropped silently, so a
// drop-in client's stop sequences did nothing), and are part of the intent:
// the same key with other stop sequences is a 409, not a replay of an answer
// made without them. Out-of-range values are refused naming the field.
func TestChatPassesTopPAndStop(t *testing.T) {
	b := setup(t, options{})
	body := `{"model":"default","messages":[{"role":"user","content":"hi"}],"top_p":0.5,"stop":["END","###"]}`
	if r := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "sampling-1"); r.status != http.StatusOK {
		t.Fatalf("status %d %s", r.status, r.raw)
	}
	reqs := b.primary.Requests()
	if len(reqs) != 1 || reqs[0].TopP == nil || *reqs[0].TopP != 0.5 || !slices.Equal(reqs[0].Stop, []string{"END", "###"}) {
		t.Fatalf("the provider received %d requests, top_p %v, stop %q; want top_p 0.5 and stop [END ###]", len(reqs), reqs[0].TopP, reqs[0].Stop)
	}
	other := strings.Replace(body, `"###"`, `"---"`, 1)
	if r := b.do(t, http.MethodPost, chatPath, acmeKey, other, "Idempotency-Key", "sampling-1"); r.status != http.StatusConflict {
		t.Fatalf("the same key with other stop sequences: %d %s, want 409", r.status, r.raw)
	}
	for bad, param := range map[string]string{
		`"top_p":1.5`:                  "top_p",
		`"stop":""`:                    "stop",
		`"stop":["a","b","c","d","e"]`: "stop",
		`"stop":[""]`:                  "stop",
		`"stop":7`:                     "stop",
	} {
		r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}],`+bad+`}`)
		_, _, p, _ := openAIErr(r)
		if r.status != http.StatusBadRequest || p != param {
			t.Errorf("%s: %d param %q %s; want 400 naming %s", bad, r.status, p, r.raw, param)
		}
	}
}

// presence_penalty, frequency_penalty, logit_bias and reasoning_effort are
// passed to the provider (they were dropped silently: a drop-in client's
// penalties did nothing) and are part of the intent: the same key with another
// value of any of them is a 409, not a replay of an answer made without it.
// Asking for log probabilities, which the router's answer does not carry, is
// refused rather than answered without them; out-of-range values are refused
// naming the field.
func TestChatPassesPenaltiesLogitBiasAndReasoningEffort(t *testing.T) {
	b := setup(t, options{})
	const fields = `"presence_penalty":0.5,"frequency_penalty":-1.25,"logit_bias":{"50256":-100,"1234":7},"reasoning_effort":"low"`
	body := `{"model":"default","messages":[{"role":"user","content":"hi"}],` + fields + `,"logprobs":false}`
	if r := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "penalties-1"); r.status != http.StatusOK {
		t.Fatalf("status %d %s", r.status, r.raw)
	}
	reqs := b.primary.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the provider received %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.PresencePenalty != 0.5 || got.FrequencyPenalty != -1.25 || !maps.Equal(got.LogitBias, map[string]int{"50256": -100, "1234": 7}) || got.ReasoningEffort != "low" {
		t.Fatalf("the provider received presence_penalty %v, frequency_penalty %v, logit_bias %v, reasoning_effort %q; want 0.5, -1.25, map[1234:7 50256:-100], low",
			got.PresencePenalty, got.FrequencyPenalty, got.LogitBias, got.ReasoningEffort)
	}
	// The same intent written otherwise (members reordered, logprobs left
	// out) is a replay.
	same := `{"model":"default","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"low","logit_bias":{"1234":7,"50256":-100},"frequency_penalty":-1.25,"presence_penalty":0.5}`
	if r := b.do(t, http.MethodPost, chatPath, acmeKey, same, "Idempotency-Key", "penalties-1"); r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the same request again: %d replayed %q %s, want a 200 replay", r.status, r.header.Get("Idempotent-Replayed"), r.raw)
	}
	for _, change := range [][2]string{
		{`"presence_penalty":0.5`, `"presence_penalty":1.5`},
		{`"frequency_penalty":-1.25`, `"frequency_penalty":0`},
		{`"1234":7`, `"1234":8`},
		{`"reasoning_effort":"low"`, `"reasoning_effort":"high"`},
	} {
		other := strings.Replace(body, change[0], change[1], 1)
		if r := b.do(t, http.MethodPost, chatPath, acmeKey, other, "Idempotency-Key", "penalties-1"); r.status != http.StatusConflict {
			t.Errorf("the same key with %s instead of %s: %d %s, want 409", change[1], change[0], r.status, r.raw)
		}
	}
	if n := len(b.primary.Requests()); n != 1 {
		t.Errorf("the provider received %d requests, want the first only", n)
	}
	for bad, param := range map[string]string{
		`"presence_penalty":2.5`:           "presence_penalty",
		`"frequency_penalty":-3`:           "frequency_penalty",
		`"logit_bias":{"50256":101}`:       "logit_bias",
		`"logit_bias":{"50256":1.5}`:       "logit_bias",
		`"logit_bias":{"hello":1}`:         "logit_bias",
		`"logit_bias":["50256"]`:           "logit_bias",
		`"reasoning_effort":""`:            "reasoning_effort",
		`"reasoning_effort":"turbo"`:       "reasoning_effort",
		`"logprobs":true`:                  "logprobs",
		`"top_logprobs":3`:                 "top_logprobs",
		`"logprobs":true,"top_logprobs":2`: "logprobs",
	} {
		r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}],`+bad+`}`)
		_, code, p, _ := openAIErr(r)
		if r.status != http.StatusBadRequest || code != "invalid_request" || p != param {
			t.Errorf("%s: %d code %q param %q %s; want 400 invalid_request naming %s", bad, r.status, code, p, r.raw, param)
		}
	}
}
