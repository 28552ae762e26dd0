package providers

import "io"

// maxAnswerArrayElems bounds the elements of any one JSON array in a
// provider's 2xx answer (a body, or one event of a stream). max_response_bytes
// bounds the bytes, not what they decode into: "choices":[{},{},…], three
// bytes an element, decodes into a struct of hundreds of bytes each, and one
// 8 MiB answer took gigabytes. The router asks for one choice; an answer has a
// handful of content blocks, parts or tool calls.
const maxAnswerArrayElems = 4096

// arrayGuardLevels is how many nesting levels arrayGuard counts one by one.
// The arrays past them (no answer nests so deep outside a tool's input) share
// one count: stricter, never looser.
const arrayGuardLevels = 32

// arrayGuard is the body of a 2xx answer read through a one-pass scan that
// fails the read, with *ResponseTooLargeError (Elements set), once any JSON
// array in it holds more than maxAnswerArrayElems elements. It keeps the
// nesting, whether it is inside a string (string contents — answer text, tool
// arguments — are never counted) and a comma count for each open array.
// Outside a string it does not check that the JSON is valid: the decoder
// does.
//
// It costs one byte loop over the bytes read, in the reader's own buffer,
// and nothing allocated beyond the guard itself.
type arrayGuard struct {
	rc  io.ReadCloser
	err error // sticky: the bound passed, or the body's own error after it
	// limit is the call's max_response_bytes, for the error.
	limit int64
	// sse: the body is an event stream, whose events are decoded one by
	// one (go-openai: each data line; Anthropic's SDK: each event's data
	// lines together). A line end ends any string (a JSON string holds no
	// raw line end) and a blank line, the event's end, starts the count
	// afresh — once a data line came: a body without one is decoded whole
	// (plainTap), blank lines and all.
	sse       bool
	bol, cr   bool // sse: at the beginning of a line; the last byte was \r
	data      bool // sse: a data line came
	inStr     bool
	esc       bool
	depth     int
	open      [arrayGuardLevels]int32 // per level: -1 an object, else the array's commas
	deep      int32                   // commas past arrayGuardLevels, while deeper
	rawInputs bool                    // the values of "input" members are not counted (rawInputSkip)
	match     int8                    // how much of `input"` the string read so far matches; -1: not it
	keyInput  bool                    // the last string read was "input"
	skipping  bool                    // inside an "input" value: levels deeper than skip are not counted
	skip      int
}

func newArrayGuard(rc io.ReadCloser, limit int64, sse, rawInputs bool) *arrayGuard {
	return &arrayGuard{rc: rc, limit: limit, sse: sse, bol: sse, rawInputs: rawInputs}
}

func (g *arrayGuard) Close() error { return g.rc.Close() }

func (g *arrayGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.rc.Read(p)
	if n > 0 && !g.scan(p[:n]) {
		g.err = &ResponseTooLargeError{Limit: g.limit, Elements: maxAnswerArrayElems}
		return 0, g.err
	}
	return n, err
}

// inputKey is the member name whose value rawInputs leaves uncounted, with
// the closing quote.
const inputKey = `input"`

// scan advances the guard over b and reports false once an array passed
// maxAnswerArrayElems.
func (g *arrayGuard) scan(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if g.bol && b[i] == 'd' {
			g.data = true // a data line (as plainTap tells one)
		}
		// Most bytes change nothing (letters, digits, string contents):
		// skipped by a table, unless a byte's meaning depends on the one
		// before it.
		if !g.esc && g.match < 0 && !g.keyInput {
			plain := &plainOutside
			if g.inStr {
				plain = &plainInside
			}
			j := i
			for j < len(b) && plain[b[j]] {
				j++
			}
			if j > i {
				g.bol, g.cr = false, false
				if j == len(b) {
					return true
				}
				i = j
			}
		}
		c := b[i]
		if g.sse {
			if c == '\r' {
				// Both decoders end lines at "\n" only (go-openai's
				// ReadBytes, Anthropic's bufio.ScanLines), dropping one
				// "\r" before it: a blank line is "\n" or "\r\n", and a
				// lone "\r" in a line (JSON's white space) ends nothing.
				if g.bol && !g.cr {
					g.cr = true
				} else {
					g.bol, g.cr = false, false
				}
				continue
			}
			if c == '\n' {
				if g.bol && g.data {
					g.reset() // a blank line: the event ended
				}
				g.bol, g.cr, g.inStr, g.esc = true, false, false, false
				continue
			}
			g.bol, g.cr = false, false
		}
		if g.inStr {
			switch {
			case g.esc:
				g.esc, g.match = false, -1
			case c == '\\':
				g.esc, g.match = true, -1
			case g.match >= 0:
				// Tracked only where an "input" member may start.
				if int(g.match) < len(inputKey) && c == inputKey[g.match] {
					g.match++
				} else {
					g.match = -1
				}
				if c == '"' {
					g.inStr = false
					g.keyInput = int(g.match) == len(inputKey)
					g.match = -1
				}
			case c == '"':
				g.inStr = false
			}
			continue
		}
		switch c {
		case '"':
			g.inStr, g.match = true, -1
			if g.rawInputs && !g.skipping {
				g.match = 0
			}
		case ':':
			if g.keyInput {
				g.skipping, g.skip = true, g.depth
			}
		case '[', '{':
			if g.depth < arrayGuardLevels {
				g.open[g.depth] = -1
				if c == '[' {
					g.open[g.depth] = 0
				}
			}
			g.depth++
		case ']', '}':
			if g.depth == 0 {
				break // not JSON: the decoder says so
			}
			g.depth--
			if g.depth == arrayGuardLevels {
				g.deep = 0
			}
			if g.skipping && g.depth <= g.skip {
				g.skipping = false // the "input" value, or its object, ended
			}
		case ',':
			if g.skipping {
				if g.depth > g.skip {
					break // inside the "input" value
				}
				g.skipping = false // the next member: the value was a scalar
			}
			if g.depth == 0 {
				break
			}
			if g.depth > arrayGuardLevels {
				if g.deep++; g.deep >= maxAnswerArrayElems {
					return false
				}
				break
			}
			if l := &g.open[g.depth-1]; *l >= 0 {
				if *l++; *l >= maxAnswerArrayElems {
					return false
				}
			}
		}
		if g.keyInput && c != '"' && c != ':' && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			g.keyInput = false
		}
	}
	return true
}

// reset forgets the nesting at the end of a stream's event.
func (g *arrayGuard) reset() {
	g.depth, g.deep = 0, 0
	g.keyInput, g.skipping = false, false
}

// plainOutside and plainInside are the bytes that change none of
// arrayGuard's state outside a string and inside one (but for an SSE line's
// start, bol and cr), when no byte before them gives them a meaning of their
// own (an escape, an "input" member's name).
var plainOutside, plainInside = func() (out, in [256]bool) {
	for c := range 256 {
		switch c {
		case '"', '[', ']', '{', '}', ',', '\n', '\r':
		default:
			out[c] = true
		}
		switch c {
		case '"', '\\', '\n', '\r':
		default:
			in[c] = true
		}
	}
	return out, in
}()
