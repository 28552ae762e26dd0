package api_test

import (
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
