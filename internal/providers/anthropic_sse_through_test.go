package providers

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// chunkReader answers each Read with (at most) the next of its chunks, as a
// network body does a packet, and records whether it was asked to fill the
// buffer given to the reader over it (into) or another one.
type chunkReader struct {
	chunks []string
	into   []byte // the caller's buffer
	direct int    // reads into it
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	if len(p) > 0 && len(c.into) > 0 && &p[0] == &c.into[0] {
		c.direct++
	}
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; c.chunks[0] == "" {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// readThrough reads all of chunks through sseEventTypes into one buffer of
// the caller's, and says how many of the source's reads filled it directly.
func readThrough(t *testing.T, chunks []string) (string, int) {
	t.Helper()
	buf := make([]byte, 32<<10)
	src := &chunkReader{chunks: append([]string(nil), chunks...), into: buf}
	r := newSSEEventTypes(src, 1<<20)
	var out bytes.Buffer
	for {
		n, err := r.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			return out.String(), src.direct
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Every stream was split into lines and copied line by line, a buffer held,
// to name the events that came without an event: line. A stream that has
// shown one (Anthropic's own: its first line) passes untouched now — read
// from the source straight into the caller's buffer, byte for byte — while a
// data-only stream is still named event by event.
func TestSSEEventTypesPassesNamedStreamThrough(t *testing.T) {
	named := []string{
		"event: message_start\ndata: " + anthStreamStart + "\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n",
		"event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":0}\r\n\r\n",
		": keep-alive\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	}
	got, direct := readThrough(t, named)
	if want := strings.Join(named, ""); got != want {
		t.Fatalf("a stream that names its events read as\n%q\nwant it byte for byte\n%q", got, want)
	}
	if direct < len(named)-1 {
		t.Errorf("%d of the source's %d reads went into the caller's buffer, want every read after the first event line (%d): the named stream was still copied line by line",
			direct, len(named), len(named)-1)
	}

	dataOnly := []string{
		"data: {\"type\":\"message_start\"}\n\n",
		"data: {\"type\":\"ping\"}\r\n\r\n",
		"data: {\"type\":\"message_stop\"}\n\n",
	}
	got, _ = readThrough(t, dataOnly)
	want := "data: {\"type\":\"message_start\"}\nevent: message_start\n\n" +
		"data: {\"type\":\"ping\"}\r\nevent: ping\n\r\n" +
		"data: {\"type\":\"message_stop\"}\nevent: message_stop\n\n"
	if got != want {
		t.Errorf("a data-only stream read as\n%q\nwant each event named\n%q", got, want)
	}
}
