package providers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// Gateways in front of Gemini send finish_reason "stop" on every chunk, so
// a finish_reason says nothing of the end of such a stream: one cut part-way
// — the body ending without [DONE], the connection reset, the provider
// silent past the idle deadline, after a usage chunk part-way or not — was
// returned as the whole answer ("Step 1: unplug the router. Step 2: wa"),
// won the job and was stored (SPEC §4.3, §15). Such a stream is whole only
// at [DONE]; cut, it fails as a received attempt with what had come. Found
// by review.
func TestOpenAIFinishOnEveryChunkCutBeforeDoneFails(t *testing.T) {
	type end int
	const (
		closed end = iota
		silent
	)
	cases := []struct {
		name    string
		events  []string
		end     end
		kind    Kind
		partial string
		usage   bool
	}{
		{"closed before [DONE]", []string{chunk("Hello", "stop"), chunk(" wor", "stop")}, closed, KindStreamCut, "Hello wor", false},
		{"closed after its first chunk", []string{chunk("Step 1: unplug the router.", "stop")}, closed, KindStreamCut, "Step 1: unplug the router.", false},
		{"closed after a usage chunk part-way", []string{chunk("Hello", "stop"), usageChunk, chunk(" wor", "stop")}, closed, KindStreamCut, "Hello wor", true},
		{"silent after a usage chunk part-way", []string{chunk("Hello", "stop"), usageChunk, chunk(" wor", "stop")}, silent, KindStreamStalled, "Hello wor", true},
		{"silent before [DONE]", []string{chunk("Hello", "stop"), chunk(" wor", "stop")}, silent, KindStreamStalled, "Hello wor", false},
		{"undecodable chunk after a usage chunk part-way", []string{chunk("Hello", "stop"), usageChunk, chunk(" wor", "stop"), `{"id":"chatcmpl-s","choices":[{"index":0,"delta":{"content":"x"`}, closed, KindStreamMalformed, "Hello wor", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var url string
			if c.end == silent {
				url, _ = holdAfter(t, func(w http.ResponseWriter) {
					startStream(w)
					sse(w, c.events...)
				}, "")
			} else {
				url = newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					startStream(w)
					sse(w, c.events...)
				}).URL
			}
			p := newTestAdapter(t, url, func(cfg *OpenAIConfig) {
				cfg.StreamIdleTimeout = 300 * time.Millisecond
				cfg.Timeout = 5 * time.Second
			})
			resp, err := p.CompleteStream(context.Background(), testRequest(), nil)
			if err == nil {
				t.Fatalf("a stream cut before [DONE] was returned as the answer %q", resp.Content)
			}
			e := mustError(t, err)
			if e.Kind != c.kind || !e.Received {
				t.Fatalf("%s received %v (%s), want %s received", e.Kind, e.Received, e.Message, c.kind)
			}
			if e.Partial != c.partial {
				t.Errorf("partial %q, want %q", e.Partial, c.partial)
			}
			if got := e.Usage != nil && e.Usage.PromptTokens == 11 && e.Usage.CompletionTokens == 5; got != c.usage {
				t.Errorf("usage %+v, want the part-way usage chunk's: %v", e.Usage, c.usage)
			}
		})
	}
}

// The same stream broken at the network level before [DONE] — reset, or
// closed without the chunked terminator — is cut too: brokenAfterEnd
// excuses a break only after the answer's end.
func TestOpenAIFinishOnEveryChunkBrokenBeforeDoneIsCut(t *testing.T) {
	for _, reset := range []bool{true, false} {
		var b strings.Builder
		for _, c := range []string{chunk("Step 1: unplug the router.", "stop"), chunk(" Step 2: wa", "stop")} {
			fmt.Fprintf(&b, "data: %s\n\n", c)
		}
		ready, onDelta := onceCloser(" Step 2: wa")
		srv := newFakeServer(t, breakAfter(t, b.String(), reset, ready))
		resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), onDelta)
		if err == nil {
			t.Fatalf("reset %v: a stream broken before [DONE] was returned as the answer %q", reset, resp.Content)
		}
		if e := mustError(t, err); e.Kind != KindStreamCut || !e.Received {
			t.Errorf("reset %v: %s received %v, want stream_cut received", reset, e.Kind, e.Received)
		}
	}
}

// With [DONE], however it is written, such a stream is whole; so is one
// whose first chunk carries finish_reason with its content (a one-chunk
// answer) when [DONE] follows. The usual shapes — finish_reason on an empty
// delta, or on the last token (vLLM, TGI) — need no [DONE]: the
// stream_break_after_end and after_finish tests keep them.
func TestOpenAIFinishOnEveryChunkWholeAtDone(t *testing.T) {
	for name, done := range map[string]string{
		"data: [DONE]":         "data: [DONE]\n\n",
		"data:[DONE]":          "data:[DONE]\n\n",
		"CRLF":                 "data: [DONE]\r\n\r\n",
		"no line end":          "data: [DONE]",
		"after a comment":      ": done\n\ndata: [DONE]\n\n",
		"white space around":   "data:  \t[DONE] \n\n",
		"after a usage chunk":  "data: " + usageChunk + "\n\ndata: [DONE]\n\n",
		"one chunk and [DONE]": "",
	} {
		t.Run(name, func(t *testing.T) {
			events := []string{chunk("Hello", "stop"), chunk(" world", "stop")}
			want := "Hello world"
			if name == "one chunk and [DONE]" {
				events, want, done = events[:1], "Hello", "data: [DONE]\n\n"
			}
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				sse(w, events...)
				fmt.Fprint(w, done)
			})
			resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
			if err != nil {
				t.Fatalf("a whole stream ended by [DONE] failed: %v", err)
			}
			if resp.Content != want || resp.FinishReason != "stop" {
				t.Fatalf("response %+v", resp)
			}
		})
	}
}

// doneTap sees [DONE] as go-openai reads it, across reads of any size, and
// nothing else.
func TestSSEFilterSeesDone(t *testing.T) {
	cases := map[string]bool{
		"data: [DONE]\n\n":                 true,
		"data:[DONE]\n":                    true,
		"data: [DONE]":                     true,
		"data: [DONE]\r\n\r\n":             true,
		": keep-alive\n\ndata: [DONE]\n\n": true,
		"event: done\ndata: [DONE]\n\n":    true,
		"data: {\"a\":1}\n\ndata: [DONE]\n\ndata: {\"b\":2}\n\n": true,
		"data: {\"content\":\"[DONE]\"}\n\n":                     false,
		"data: [DONE]x\n\n":                                      false,
		"data: [DON":                                             false,
		"data: [DONE] [DONE]\n\n":                                false,
		": data: [DONE]\n\n":                                     false,
		"event: [DONE]\n\n":                                      false,
		"data: x\n\n":                                            false,
		"":                                                       false,
	}
	for body, want := range cases {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(body)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			f := newSSEFilter(io.NopCloser(r))
			if _, err := io.Copy(io.Discard, iotest.OneByteReader(f)); err != nil {
				t.Fatal(err)
			}
			if got := f.done.sent(); got != want {
				t.Errorf("%q (one byte a read %v): [DONE] seen %v, want %v", body, oneByte, got, want)
			}
		}
	}
}
