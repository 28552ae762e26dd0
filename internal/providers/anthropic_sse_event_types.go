package providers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// sseEventTypes reads an Anthropic stream and names each SSE event that
// came without an `event:` line by the "type" of its data's JSON: an
// `event: <type>` line is written before the blank line that ends it. The
// SSE event field is optional, every Messages API event names its type in
// its data ({"type":"message_start",…}), and some Anthropic-compatible
// proxies and gateways send `data:` lines alone; the SDK's decoder skips
// every event without a type, so such a stream — a whole, billed answer, or
// an error event — was read as no events at all (stream_cut "after 0
// events"). An event that has an `event:` line, a comment, and an event
// whose data is not a JSON object with a one-line "type" string pass as they
// came. Once an `event:` line has come (Anthropic's first line), the stream
// is one that names its events, and the rest passes untouched: read from the
// source into the caller's buffer, with no line split or copied (a data-only
// event after it is not named). A stream with its `event:` lines is read
// byte for byte as before.
// Lines are split as the SDK's decoder splits them (at "\n", a "\r" before
// it dropped). A line, and an event's data, longer than limit
// (max_response_bytes, which also bounds the body it reads) fail the read
// with a *ResponseTooLargeError.
type sseEventTypes struct {
	raw   io.Reader // the source as given, read directly once through
	src   *bufio.Reader
	limit int64
	line  []byte // the line being read
	out   []byte // read, not yet returned
	err   error  // the source's error, returned once out is drained
	// The event being read: whether it has an `event:` line, and its data
	// (the SDK's: each data line's value and "\n") while it has none.
	named, hasData bool
	data           []byte
	// through: an `event:` line came, the rest passes as it comes.
	through bool
}

func newSSEEventTypes(r io.Reader, limit int64) *sseEventTypes {
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	return &sseEventTypes{raw: r, src: bufio.NewReader(r), limit: limit}
}

func (s *sseEventTypes) Read(p []byte) (int, error) {
	for len(s.out) == 0 && s.err == nil && !s.through {
		s.readLine()
	}
	if len(s.out) > 0 {
		n := copy(p, s.out)
		s.out = s.out[n:]
		return n, nil
	}
	if s.err != nil {
		return 0, s.err
	}
	if s.src.Buffered() > 0 {
		return s.src.Read(p) // what the line reading had read ahead
	}
	return s.raw.Read(p)
}

// readLine reads the source up to the end of a line (or an error) and puts
// what it read in out, with an event line before it when it ends an event
// that has none.
func (s *sseEventTypes) readLine() {
	s.line = s.line[:0]
	for {
		chunk, err := s.src.ReadSlice('\n')
		s.line = append(s.line, chunk...)
		if int64(len(s.line)) > s.limit {
			s.err = &ResponseTooLargeError{Limit: s.limit}
			return
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			// A last line without its end: the SDK dispatches no event
			// at it, so it is handed on as it came.
			s.out, s.err = s.line, err
			return
		}
		break
	}
	s.out = s.line
	txt := bytes.TrimSuffix(bytes.TrimSuffix(s.line, []byte("\n")), []byte("\r"))
	if len(txt) == 0 {
		if !s.named && s.hasData {
			if typ := sseDataType(s.data); typ != "" {
				s.out = append([]byte("event: "+typ+"\n"), s.line...)
			}
		}
		s.named, s.hasData, s.data = false, false, s.data[:0]
		return
	}
	name, value, _ := bytes.Cut(txt, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "event":
		// The stream names its events: the rest passes through
		// (its line and data buffers let go).
		s.named, s.through, s.line, s.data = true, true, nil, nil
	case "data":
		s.hasData = true
		if s.named {
			return
		}
		if int64(len(s.data)+len(value)+1) > s.limit {
			s.err = &ResponseTooLargeError{Limit: s.limit}
			s.out = nil
			return
		}
		s.data = append(append(s.data, value...), '\n')
	}
}

// sseDataType is the top-level "type" string of an event's data, "" when
// the data is not a JSON object with one, or the type could not be written
// on one line.
func sseDataType(data []byte) string {
	var ev struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &ev) != nil || strings.ContainsAny(ev.Type, "\r\n") {
		return ""
	}
	return ev.Type
}
