package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A chat job has no prompt: the span of an attempt whose answer misses the
// request's response_format says so, in the words of the job's failure
// note, not that it breaks "the prompt's contract". Found by review.
func TestChatInvalidAnswerSpanNamesWhatWasBroken(t *testing.T) {
	exp := installTestTracing(t)
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: "not json"} }})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi, in JSON"}],"response_format":{"type":"json_object"}}`)
	if r.status != http.StatusBadGateway {
		t.Fatalf("%d %s, want 502", r.status, r.raw)
	}
	const want = "the answer is not the JSON object the request's response_format asks for: "
	invalid := 0
	for _, s := range exp.GetSpans() {
		if !strings.HasPrefix(s.Name, "chat ") || s.Status.Description == "" {
			continue
		}
		if !strings.HasPrefix(s.Status.Description, want) || strings.Contains(s.Status.Description, "prompt") {
			t.Errorf("span %q: status %q, want it to begin %q", s.Name, s.Status.Description, want)
		}
		invalid++
	}
	if invalid == 0 {
		t.Fatal("no attempt span has an error status")
	}
}
