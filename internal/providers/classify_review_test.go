package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// A provider's error code (or type, when it sends no code) is stored with
// the attempt and shown in the job like the message: a hostile or broken
// provider must not be able to put an unbounded string there (the message is
// bounded to maxMessage for the same reason).
func TestClassifyBoundsTheProviderCode(t *testing.T) {
	huge := strings.Repeat("é", 100_000) // 200,000 bytes, multi-byte runes
	check := func(name string, e *Error) {
		t.Helper()
		if len(e.Code) > maxCode || !utf8.ValidString(e.Code) || e.Code == "" {
			t.Errorf("%s: code of %d bytes (valid UTF-8 %v), want 1..%d bytes", name, len(e.Code), utf8.ValidString(e.Code), maxCode)
		}
		if len(e.Message) > maxMessage+len("…") {
			t.Errorf("%s: message of %d bytes", name, len(e.Message))
		}
	}
	check("status code", ClassifyStatus("p", 400, huge, "bad"))
	check("api code", Classify("p", &openai.APIError{HTTPStatusCode: 500, Code: huge, Message: "x"}))
	check("api type", Classify("p", &openai.APIError{HTTPStatusCode: 500, Type: huge, Message: "x"}))
	check("inner code", Classify("p", &openai.APIError{HTTPStatusCode: 400, InnerError: &openai.InnerError{Code: huge}, Message: "x"}))

	// Through the adapter, over real HTTP, streamed or not.
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, 400, nil, apiErrorBody("rejected", "invalid_request_error", nil, huge))
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
		_, err := p.Complete(context.Background(), testRequest())
		check("adapter", mustError(t, err))
	}

	// Ordinary codes are kept whole.
	if e := ClassifyStatus("p", 400, "context_length_exceeded", ""); e.Code != "context_length_exceeded" {
		t.Errorf("code %q", e.Code)
	}
}

// HTTP 529 (overloaded, sent by Anthropic and by proxies in front of other
// providers) is unavailable, as docs/providers.md says of "any 529", whichever
// adapter or the scripted provider saw it: the same condition gets the same
// kind in the job and in router_attempt_errors_total.
func TestClassify529IsUnavailable(t *testing.T) {
	e := ClassifyStatus("p", 529, "", "")
	if e.Kind != KindUnavailable || e.Action != ActionRetry || e.Fault != FaultProvider || e.StatusCode != 529 {
		t.Fatalf("ClassifyStatus(529) = %+v", e)
	}
	for _, stream := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, 529, map[string]string{"Retry-After": "4"}, apiErrorBody("Overloaded", "overloaded_error", nil, nil))
		})
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
		_, err := p.Complete(context.Background(), testRequest())
		e := assertKind(t, err, KindUnavailable, FaultProvider, ActionRetry, false)
		if e.RetryAfter.Seconds() != 4 {
			t.Fatalf("retry after %v", e.RetryAfter)
		}
	}
}
