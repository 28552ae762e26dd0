package providers

import (
	"bytes"
	"io"
)

// sseFilter is the body of a streamed OpenAI-compatible answer as go-openai
// reads it, without the lines of the stream that are not data: SSE comments
// (": keepalive", OpenRouter's ": OPENROUTER PROCESSING") and the event, id
// and retry fields. go-openai keeps every line that does not start with
// "data:" in the buffer it decodes an in-stream error from, so a comment or
// an "event: error" line before `data: {"error": …}` made the error
// undecodable: RecvRaw returned neither a line nor an error, and the
// provider's error (a rate limit, a context length) became a malformed stream.
// Data lines, blank lines and lines of a body that is not SSE at all (a JSON
// error sent with status 200, which go-openai decodes from that same buffer)
// pass as they came.
//
// The filter sits above the byte counting of the transport: the lines it
// drops still keep the call alive (liveBody) and count towards
// max_response_bytes (limitedBody).
//
// It costs one scan for line ends over the bytes read, in the reader's own
// buffer: the body is read straight into it, and bytes move only to close the
// gap a dropped line leaves (a read that holds no comment is passed on as it
// came). Nothing is allocated beyond the filter itself, but for the one
// error line errTap keeps.
type sseFilter struct {
	rc        io.ReadCloser
	lineStart bool // the next byte read begins a line
	drop      bool // the line being read is dropped
	// held is the start of a line a read ended in that may still become a
	// dropped field ("ev" of "event:"): it is decided on the next read.
	held  [len("retry:")]byte
	nheld int
	// err is the body's error, returned once what came before it is.
	err error
	// out is what a fill into small (for a Read under len(small) bytes)
	// has left to return.
	out   []byte
	small [64]byte
	// tap keeps an error event go-openai cannot decode (errTap).
	tap errTap
	// plain keeps a body that is not a stream at all (plainTap).
	plain plainTap
	// done sees the stream's [DONE] (doneTap).
	done doneTap
}

func newSSEFilter(rc io.ReadCloser) *sseFilter { return &sseFilter{rc: rc, lineStart: true} }

func (f *sseFilter) Close() error { return f.rc.Close() }

func (f *sseFilter) Read(p []byte) (int, error) {
	if len(f.out) > 0 {
		n := copy(p, f.out)
		f.out = f.out[n:]
		return n, nil
	}
	if len(p) >= len(f.small) {
		return f.fill(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := f.fill(f.small[:])
	f.out = f.small[:n]
	k := copy(p, f.out)
	f.out = f.out[k:]
	if k == 0 {
		return 0, err
	}
	return k, nil
}

// fill reads the body into buf (at least len(held) bytes) and returns how
// many filtered bytes it left at its start: 0 only with an error, or when
// the body's Read returned nothing.
func (f *sseFilter) fill(buf []byte) (int, error) {
	for {
		if f.err != nil {
			if f.nheld > 0 {
				// The body ended inside the start of a line that was not
				// a field's: it is kept.
				n := copy(buf, f.held[:f.nheld])
				f.nheld = 0
				return n, nil
			}
			return 0, f.err
		}
		h := copy(buf, f.held[:f.nheld])
		f.nheld = 0
		m, err := f.rc.Read(buf[h:])
		if err != nil {
			f.err = err
		}
		if w := f.scan(buf[:h+m]); w > 0 || m == 0 && err == nil {
			return w, nil
		}
	}
}

// scan filters buf in place and returns the length of what it keeps.
func (f *sseFilter) scan(buf []byte) int {
	r, w := 0, 0
	for r < len(buf) {
		if f.drop {
			j := bytes.IndexByte(buf[r:], '\n')
			if j < 0 {
				break
			}
			r += j + 1
			f.drop, f.lineStart = false, true
			continue
		}
		if f.lineStart {
			switch sseLine(buf[r:]) {
			case sseUndecided:
				f.nheld = copy(f.held[:], buf[r:])
				return w
			case sseDrop:
				f.drop, f.lineStart = true, false
				continue
			}
			f.lineStart = false
			f.tap.startLine(buf[r])
			f.plain.startLine(buf[r])
			f.done.pos = 0
		}
		e := len(buf)
		if j := bytes.IndexByte(buf[r:], '\n'); j >= 0 {
			e = r + j + 1
			f.lineStart = true
		}
		f.tap.feed(buf[r:e], f.lineStart)
		f.plain.feed(buf[r:e])
		f.done.feed(buf[r:e], f.lineStart)
		if w != r {
			copy(buf[w:], buf[r:e])
		}
		w += e - r
		r = e
	}
	return w
}

const (
	sseKeep = iota
	sseDrop
	sseUndecided
)

// sseFields are the SSE fields a line is dropped for, besides a comment.
var sseFields = [...]string{"event:", "id:", "retry:"}

// sseLine decides a line by its first bytes b (all of the line the read
// holds): a comment or an event, id or retry field is dropped; the start of
// one, cut by the end of the read, is undecided.
func sseLine(b []byte) int {
	if b[0] == ':' {
		return sseDrop
	}
	if b[0] != 'e' && b[0] != 'i' && b[0] != 'r' {
		return sseKeep // "data:", a blank line, JSON
	}
	for _, field := range sseFields {
		switch {
		case len(b) >= len(field) && string(b[:len(field)]) == field:
			return sseDrop
		case len(b) < len(field) && string(b) == field[:len(b)]:
			return sseUndecided
		}
	}
	return sseKeep
}

// doneTap sees whether the stream sent [DONE]: a kept line that is, as
// go-openai reads it, "data:", any white space, then "[DONE]". go-openai's
// RecvRaw returns io.EOF for [DONE] and for the end of the body alike; a
// stream whose finish_reason came on every chunk (streamAcc.finishEarly) is
// whole only at [DONE].
//
// It costs a comparison for each byte of a line up to its first that does
// not match (the seventh of a data line with a chunk), and allocates nothing.
type doneTap struct {
	// pos is how much of doneLine the line being read has matched; -1: the
	// line is not [DONE]. Reset at the start of each kept line.
	pos  int8
	seen bool
}

const doneLine = "data:[DONE]"

// feed is called with each part of a kept line, in order; ended says the
// part ends the line.
func (t *doneTap) feed(seg []byte, ended bool) {
	if t.seen || t.pos < 0 {
		return
	}
	for _, c := range seg {
		switch {
		case (t.pos == 0 || t.pos == int8(len("data:")) || t.pos == int8(len(doneLine))) &&
			(c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'):
			// white space before the line, after "data:" or after [DONE]
		case t.pos < int8(len(doneLine)) && c == doneLine[t.pos]:
			t.pos++
		default:
			t.pos = -1
			return
		}
	}
	if ended && t.pos == int8(len(doneLine)) {
		t.seen = true
	}
}

// sent reports whether the stream sent [DONE]: a whole line, or the last of
// a body that ended without its line end.
func (t *doneTap) sent() bool { return t.seen || t.pos == int8(len(doneLine)) }
