package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A provider's 400 names the request member it refuses (OpenAI's
// error.param) beside its code: the error keeps both, so the router can echo
// them to a chat caller as the provider would have said them. The param was
// dropped. Found by review.
func TestBadRequestKeepsProviderParam(t *testing.T) {
	bodies := map[string]struct{ body, param, code string }{
		"openai": {
			`{"error":{"message":"Invalid value for 'content': expected a string, got null.","type":"invalid_request_error","param":"messages.[0].content","code":"invalid_value"}}`,
			"messages.[0].content", "invalid_value",
		},
		// A body go-openai cannot decode (its innererror not an object):
		// read by bodyError, the param too.
		"undecoded": {
			`{"error":{"message":"Invalid value for 'temperature'.","type":"invalid_request_error","param":"temperature","code":"invalid_value","innererror":"x"}}`,
			"temperature", "invalid_value",
		},
		"no param": {
			`{"error":{"message":"We could not parse the JSON body of your request.","type":"invalid_request_error","param":null,"code":null}}`,
			"", "invalid_request_error",
		},
	}
	for name, c := range bodies {
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) { writeError(w, http.StatusBadRequest, nil, c.body) })
			p := newTestAdapter(t, srv.URL, func(cfg *OpenAIConfig) { cfg.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			e := assertKind(t, err, KindBadRequest, FaultCaller, ActionStop, false)
			if e.Param != c.param || e.Code != c.code {
				t.Errorf("%s stream=%v: param %q code %q, want %q %q", name, stream, e.Param, e.Code, c.param, c.code)
			}
		}
	}
}

// The param and code come from the provider: they are kept printable and
// short, whatever it sends.
func TestProviderParamAndCodeBounded(t *testing.T) {
	long := strings.Repeat("p", 5000)
	body := `{"error":{"message":"bad","type":"invalid_request_error","param":"messages\u0000\u001b[31m` + long + `","code":"bad\n\u00e9` + long + `"}}`
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) { writeError(w, http.StatusBadRequest, nil, body) })
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	e := assertKind(t, err, KindBadRequest, FaultCaller, ActionStop, false)
	if len(e.Param) > maxParam || !strings.HasPrefix(e.Param, "messages[31mppp") {
		t.Errorf("param %d bytes: %q", len(e.Param), e.Param)
	}
	if len(e.Code) > maxCode || !strings.HasPrefix(e.Code, "badéppp") {
		t.Errorf("code %d bytes: %q", len(e.Code), e.Code)
	}
	for _, s := range []string{e.Param, e.Code} {
		for _, r := range s {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("%q holds a control character", s)
			}
		}
	}
	if got := ClipIdent("aé\xffb", 3); got != "aé" {
		t.Errorf("ClipIdent cut within a character or kept invalid UTF-8: %q", got)
	}
}

// OpenAI's string_above_max_length ("Invalid 'tools[0].function.description':
// string too long. Expected a string with maximum length 1024 …") is a limit
// of OpenAI's API on one member of the request, not the prompt's length
// against the model's context window. It was classified as context length:
// the caller heard context_length_exceeded (param "messages", "shorten the
// messages") and the race skipped every target of a window no larger, which
// may well take the request (Anthropic, a self-hosted server: no such limit).
// It is a bad request, the caller's, that fails over as a feature the target
// lacks does. Found by review.
func TestStringAboveMaxLengthIsBadRequest(t *testing.T) {
	bodies := []string{
		`{"error":{"message":"Invalid 'tools[0].function.description': string too long. Expected a string with maximum length 1024, but got a string with length 1500 instead.","type":"invalid_request_error","param":"tools[0].function.description","code":"string_above_max_length"}}`,
		`{"error":{"message":"Invalid 'messages[0].content': string too long. Expected a string with maximum length 10485760, but got a string with length 10485761 instead.","type":"invalid_request_error","param":"messages[0].content","code":"string_above_max_length"}}`,
	}
	for _, body := range bodies {
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) { writeError(w, http.StatusBadRequest, nil, body) })
			p := newTestAdapter(t, srv.URL, func(cfg *OpenAIConfig) { cfg.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			e := assertKind(t, err, KindBadRequest, FaultCaller, ActionFailover, false)
			if want := body[strings.Index(body, `"param":"`)+9 : strings.Index(body, `","code"`)]; e.Code != "string_above_max_length" || e.Param != want {
				t.Errorf("%.60s… stream=%v: code %q param %q", body, stream, e.Code, e.Param)
			}
		}
	}
	// A prompt past the context window is still context length.
	e := ClassifyStatus("p", http.StatusBadRequest, "context_length_exceeded", "This model's maximum context length is 128000 tokens.")
	if e.Kind != KindContextLength {
		t.Errorf("context_length_exceeded: %s", e.Kind)
	}
}
