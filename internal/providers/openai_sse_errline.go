package providers

import "bytes"

// errTap keeps the first data line of a stream whose payload go-openai takes
// for an error event (`data:\s*{"error":`, go-openai's errorPrefix). go-openai
// decodes such a line only when its "error" is an object: TGI's
// `data:{"error":"Input validation error: …","error_type":"validation"}` (and
// other servers' string errors) left RecvRaw returning neither a line nor an
// error, and the provider's verdict became a malformed or cut stream. The
// adapter classifies the kept line itself (openAIStreamErrLine).
//
// It costs a few byte comparisons at the start of each data line; bytes are
// copied only for the one error line, at most maxErrLine of them.
type errTap struct {
	state tapState
	head  [64]byte // the start of the data line being decided
	nhead int
	line  []byte // the error line, once one is found
}

type tapState int8

const (
	tapIdle      tapState = iota // between data lines, or in one that is not an error
	tapDeciding                  // in a data line whose start is not yet known
	tapCapturing                 // in the error line
	tapDone                      // an error line was kept: nothing more is looked at
)

// maxErrLine bounds the error line kept: an error's message is short, and a
// provider must not make the router hold a body.
const maxErrLine = 4096

// startLine is called at the start of each line the filter keeps, with its
// first byte.
func (t *errTap) startLine(first byte) {
	if t.state == tapDone {
		return
	}
	t.state, t.nhead = tapIdle, 0
	if first == 'd' || first == 'e' {
		t.state = tapDeciding
	}
}

// feed is called with each part of a kept line, in order; ended says the
// part ends the line.
func (t *errTap) feed(seg []byte, ended bool) {
	if t.state == tapIdle || t.state == tapDone {
		return
	}
	if t.state == tapDeciding {
		n := copy(t.head[t.nhead:], seg)
		t.nhead += n
		switch errLinePrefix(t.head[:t.nhead]) {
		case prefixNo:
			t.state = tapIdle
			return
		case prefixUndecided:
			if t.nhead == len(t.head) || ended {
				t.state = tapIdle
			}
			return
		}
		t.state = tapCapturing
		t.line = append(make([]byte, 0, 256), t.head[:t.nhead]...)
		seg = seg[n:]
	}
	if room := maxErrLine - len(t.line); room > 0 {
		t.line = append(t.line, seg[:min(room, len(seg))]...)
	}
	if ended {
		t.state = tapDone
	}
}

// errLine is the error line kept, without its field ("data:" or "error:")
// and the line's end; nil when the stream held none.
func (t *errTap) errLine() []byte {
	if t.line == nil {
		return nil
	}
	l := bytes.TrimSpace(t.line)
	_, v, _ := bytes.Cut(l, []byte(":"))
	return bytes.TrimSpace(v)
}

const (
	prefixNo = iota
	prefixYes
	prefixUndecided
)

// errLinePrefix decides whether a line that starts with b is an error event:
// "data:", any white space, then `{"error":`; or an SSE field "error:", any
// white space, then an object — llama.cpp's server sends its errors inside a
// stream as `error: {"code":400,"message":"…","type":"exceed_context_size_error"}`,
// which go-openai keeps as text it cannot decode (the stream then read as cut,
// the provider's reason lost).
func errLinePrefix(b []byte) int {
	const data, obj = "data:", `{"error":`
	if len(b) > 0 && b[0] == 'e' {
		return errorFieldPrefix(b)
	}
	if len(b) < len(data) {
		if string(b) == data[:len(b)] {
			return prefixUndecided
		}
		return prefixNo
	}
	if string(b[:len(data)]) != data {
		return prefixNo
	}
	b = b[len(data):]
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	if len(b) < len(obj) {
		if string(b) == obj[:len(b)] {
			return prefixUndecided
		}
		return prefixNo
	}
	if string(b[:len(obj)]) == obj {
		return prefixYes
	}
	return prefixNo
}

// errorFieldPrefix is errLinePrefix for a line that starts with 'e': the SSE
// field "error:", any white space, then "{".
func errorFieldPrefix(b []byte) int {
	const field = "error:"
	if len(b) < len(field) {
		if string(b) == field[:len(b)] {
			return prefixUndecided
		}
		return prefixNo
	}
	if string(b[:len(field)]) != field {
		return prefixNo
	}
	b = b[len(field):]
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	switch {
	case len(b) == 0:
		return prefixUndecided
	case b[0] == '{':
		return prefixYes
	}
	return prefixNo
}
