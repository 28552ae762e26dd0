package providers

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// go-openai gathers every line of a stream that is not "data: …" (an SSE
// comment, an "event:" line) into the buffer it decodes an error event from:
// an error event after one (": waiting for a valid answer", or the
// "event: error" line that names it) no longer decoded, RecvRaw returned
// neither a line nor an error, and the provider's rate limit became
// stream_malformed — failed over at once, counted as the target's broken
// stream, its Retry-After and kind lost. Such lines are taken out of the body
// before go-openai reads it (they still keep the call alive). Found by review.
func TestStreamErrorAfterCommentAndEventLines(t *testing.T) {
	const errEvent = `data: {"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}` + "\n\n"
	for _, prefix := range []string{
		"",
		": waiting for a valid answer\n\n",
		"event: error\n",
		": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\nevent: error\nid: 7\nretry: 1000\n",
		":\n\nevent:error\n",
	} {
		for _, afterChunk := range []bool{false, true} {
			name := fmt.Sprintf("prefix %q, after a chunk %v", prefix, afterChunk)
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				if afterChunk {
					sse(w, chunk("half", ""))
				}
				fmt.Fprint(w, prefix+errEvent)
			})
			resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
			if resp != nil {
				t.Fatalf("%s: came back as an answer", name)
			}
			if e := mustError(t, err); e.Kind != KindRateLimited || !e.Received {
				t.Errorf("%s: %s (%v), Received %v; want rate_limited, Received", name, e.Kind, e, e.Received)
			}
		}
	}
}

// The lines taken out are SSE comments and the event, id and retry fields
// only: data lines, blank lines and a body that is not SSE at all (a JSON
// error a server sends with status 200) reach go-openai as they came, however
// the body is cut into reads.
func TestSSEFilterKeepsDataLines(t *testing.T) {
	const body = ": hello\n\nevent: message\nid: 1\ndata: {\"a\":1}\n\nretry: 5\ndata: [DONE]\n" +
		"data:event: x\n  : not a comment\n{\"error\": {\n  \"message\": \"x\"\n}}\nevent: e"
	const want = "\ndata: {\"a\":1}\n\ndata: [DONE]\n" +
		"data:event: x\n  : not a comment\n{\"error\": {\n  \"message\": \"x\"\n}}\n"
	for _, read := range []int{1, 2, 3, 7, 64, 4096} {
		got, err := readAllIn(newSSEFilter(nopCloser(body)), read)
		if err != nil || got != want {
			t.Errorf("reads of %d bytes: %q %v\nwant %q", read, got, err, want)
		}
	}
	// A line longer than a read is kept or dropped whole.
	long := make([]byte, 10000)
	for i := range long {
		long[i] = 'x'
	}
	in := ": " + string(long) + "\ndata: " + string(long) + "\n: " + string(long)
	got, err := readAllIn(newSSEFilter(nopCloser(in)), 4096)
	if err != nil || got != "data: "+string(long)+"\n" {
		t.Errorf("long lines: %d bytes %v", len(got), err)
	}
}

// readAllIn reads r to its end in reads of at most n bytes. As bufio does,
// it fails after 100 reads in a row that return nothing.
func readAllIn(r io.Reader, n int) (string, error) {
	var out []byte
	buf := make([]byte, n)
	for empty := 0; ; {
		k, err := r.Read(buf)
		out = append(out, buf[:k]...)
		if err == io.EOF {
			return string(out), nil
		}
		if err != nil {
			return string(out), err
		}
		if empty++; k > 0 {
			empty = 0
		} else if empty == 100 {
			return string(out), io.ErrNoProgress
		}
	}
}

func nopCloser(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }

// TestSSEFilterMatchesLineByLine: however the body comes (in pieces of any
// size) and however it is read, the filter gives what dropping its lines one
// by one gives.
func TestSSEFilterMatchesLineByLine(t *testing.T) {
	tokens := []string{"data: x", "data:{\"error\":1}", ":", ": ping", "event: e", "event:", "ev", "e", "id:", "id", "i",
		"r", "retry:", "retry", "\n", "\n", "\n", "\r\n", "{", " ", "x"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(tokens[rng.IntN(len(tokens))])
		}
		in := b.String()
		var want strings.Builder
		for _, line := range strings.SplitAfter(in, "\n") {
			if !strings.HasPrefix(line, ":") && !strings.HasPrefix(line, "event:") &&
				!strings.HasPrefix(line, "id:") && !strings.HasPrefix(line, "retry:") {
				want.WriteString(line)
			}
		}
		body := &piecesReader{s: in, rng: rng}
		got, err := readAllIn(newSSEFilter(io.NopCloser(body)), 1+rng.IntN(100))
		if err != nil || got != want.String() {
			t.Fatalf("body %q:\n got %q %v\nwant %q", in, got, err, want.String())
		}
	}
}

// piecesReader returns s in pieces of random sizes, some empty.
type piecesReader struct {
	s   string
	rng *rand.Rand
}

func (r *piecesReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.rng.IntN(8))], r.s)
	r.s = r.s[n:]
	return n, nil
}
