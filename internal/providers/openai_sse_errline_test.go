package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// An error event whose "error" is a string (TGI's `data:{"error":"…",
// "error_type":"validation"}`, LM Studio, proxies) is not decoded by
// go-openai: RecvRaw returned neither a line nor an error and the provider's
// verdict — a prompt too long for the model, an overloaded server — became
// stream_malformed (or, as the body's last line, a cut stream): failed over
// as the target's broken stream, the caller's 422 lost. The filter keeps the
// line and the adapter classifies it. Found by review (left alone in the
// twenty-fifth session).
func TestStreamStringErrorEvent(t *testing.T) {
	cases := []struct {
		event string
		want  Kind
		text  string
	}{
		{`{"error":"Input validation error: ` + "`inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`" + `","error_type":"validation"}`,
			KindContextLength, "must be <= 4096"},
		{`{"error":"Input validation error: temperature must be strictly positive","error_type":"validation"}`,
			KindBadRequest, "temperature must be strictly positive"},
		{`{"error":"Model is overloaded","error_type":"overloaded"}`, KindRateLimited, "rate-limited"}, // the provider's words are logged, not shown
		{`{"error":"CUDA out of memory","error_type":"generation"}`, KindServerError, "CUDA out of memory"},
		{`{"error":"upstream went away"}`, KindServerError, "upstream went away"},
	}
	for _, c := range cases {
		for _, form := range []string{"data:%s\n\n", "data: %s\n\n", "data:  %s", ": ping\n\ndata: %s\n\ndata: [DONE]\n\n"} {
			for _, afterChunk := range []bool{false, true} {
				name := fmt.Sprintf("%s, form %q, after a chunk %v", c.want, form, afterChunk)
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					startStream(w)
					if afterChunk {
						sse(w, chunk("half", ""))
					}
					fmt.Fprintf(w, form, c.event)
				})
				resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
				if resp != nil {
					t.Fatalf("%s: came back as an answer", name)
				}
				e := mustError(t, err)
				if e.Kind != c.want || !e.Received || !strings.Contains(e.Message, c.text) {
					t.Errorf("%s: %s %q, Received %v; want %s naming %q", name, e.Kind, e.Message, e.Received, c.want, c.text)
				}
			}
		}
	}
}

// The filter keeps the error line however the body is cut into reads, keeps
// nothing for a stream without one, and keeps at most maxErrLine bytes.
func TestSSEFilterKeepsErrorLine(t *testing.T) {
	long := strings.Repeat("x", 10000)
	cases := []struct{ body, want string }{
		{"data: {\"id\":\"1\"}\n\ndata: {\"error\":\"boom\",\"error_type\":\"generation\"}\n\n", `{"error":"boom","error_type":"generation"}`},
		{": c\n\ndata:\t {\"error\": \"a\"}\r\n\ndata: {\"error\":\"second\"}\n", `{"error": "a"}`},
		{"data: {\"id\":\"1\"}\n\ndata: [DONE]\n\n", ""},
		{"data: {\"errors\":1}\ndata: {\"id\":{\"error\":1}}\n {\"error\":2}\ndata {\"error\":3}\n", ""},
		{"data: {\"error\":\"" + long + "\"}\n", (`{"error":"` + long)[:maxErrLine-len("data: ")]},
	}
	for _, c := range cases {
		for _, read := range []int{64, 65, 100, 4096} {
			f := newSSEFilter(nopCloser(c.body))
			if _, err := readAllIn(f, read); err != nil {
				t.Fatal(err)
			}
			if got := string(f.tap.errLine()); got != c.want {
				t.Errorf("body %.60q, reads of %d: kept %.80q, want %.80q", c.body, read, got, c.want)
			}
		}
	}
}
