package providers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// benchStream is a streamed answer of 300 token chunks, its finish, its usage
// and [DONE], as OpenAI sends it; keepalive adds an SSE comment (with its
// blank line) every 10 chunks, as OpenRouter sends while it waits.
func benchStream(keepalive bool) []byte {
	var b strings.Builder
	for i := range 300 {
		if keepalive && i%10 == 0 {
			b.WriteString(": OPENROUTER PROCESSING\n\n")
		}
		b.WriteString("data: " + benchChunks[0].raw + "\n\n")
	}
	b.WriteString("data: " + chunk("", "stop") + "\n\n")
	b.WriteString("data: " + benchChunks[2].raw + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// BenchmarkOpenAIStream is one streamed call through the adapter from the
// response body to the assembled Response, without a network (the body is
// in memory): what the adapter and go-openai spend per stream.
func BenchmarkOpenAIStream(b *testing.B) {
	for _, c := range []struct {
		name      string
		keepalive bool
	}{{"chunks", false}, {"chunks+comments", true}} {
		body := benchStream(c.keepalive)
		b.Run(c.name, func(b *testing.B) {
			p, err := NewOpenAI(OpenAIConfig{Name: "bench", BaseURL: "http://bench.invalid/v1", Model: "m",
				HTTPClient: &http.Client{Transport: bodyTransport{status: 200, contentType: "text/event-stream", body: body}}})
			if err != nil {
				b.Fatal(err)
			}
			req := testRequest()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.CompleteStream(context.Background(), req, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSSEFilter reads a stream's body in reads of 4096 bytes (what
// go-openai's bufio.Reader asks for), straight and through sseFilter: the
// filter's own cost per stream, to set against BenchmarkOpenAIStream's.
func BenchmarkSSEFilter(b *testing.B) {
	for _, keepalive := range []bool{false, true} {
		body := benchStream(keepalive)
		for _, filtered := range []bool{false, true} {
			b.Run(fmt.Sprintf("comments=%v/filtered=%v", keepalive, filtered), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				buf := make([]byte, 4096)
				for b.Loop() {
					var rc io.ReadCloser = io.NopCloser(bytes.NewReader(body))
					if filtered {
						rc = newSSEFilter(rc)
					}
					for {
						if _, err := rc.Read(buf); err != nil {
							break
						}
					}
				}
			})
		}
	}
}
