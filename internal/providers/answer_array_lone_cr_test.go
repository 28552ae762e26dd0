package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// arrayGuard treats a lone "\r" as a line end in a stream (so "\r\r" is a
// blank line that starts the count afresh), but neither decoder does:
// go-openai splits a stream's lines at "\n" only (ReadBytes('\n'), then
// TrimSpace), Anthropic's SDK with bufio.ScanLines ("\r"? "\n"), and
// encoding/json reads a "\r" between elements as white space. So a data
// line whose array puts "\r\r" before every 4000th element is decoded whole
// by the SDK while the guard counts it in pieces: an answer holding far
// more than maxAnswerArrayElems elements (the 300-530x memory amplification
// the bound is for) is let through.
func TestAnswerArrayBoundNotResetByLoneCR(t *testing.T) {
	const n = 3 * maxAnswerArrayElems
	arr := func(elem string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
				if i%4000 == 0 {
					b.WriteString("\r\r")
				}
			}
			b.WriteString(elem)
		}
		return b.String()
	}
	t.Run("openai stream", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			startStream(w)
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[%s]}\n\n", arr("{}"))
		})
		_, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
		assertArrayBound(t, fmt.Sprintf("%d choices with \\r\\r between some", n), err)
	})
	t.Run("anthropic stream", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			anthropicSSE(w, arr("{}"), "{}")
		})
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = true })
		_, err := p.Complete(context.Background(), testRequest())
		assertArrayBound(t, fmt.Sprintf("%d content blocks with \\r\\r between some", n), err)
	})
}
