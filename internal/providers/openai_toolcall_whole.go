package providers

import "encoding/json"

// argsShape follows a streamed tool call's arguments as their deltas are
// appended, so that whether they are a whole JSON value (newCallByName) is
// known without scanning all of them again for each delta: a call of n bytes
// sent as index-less deltas that repeat the function name cost O(n²), and a
// 7 MiB one took minutes of CPU. Each byte is looked at once; json.Valid,
// for exactness, runs only when the shape says a value has just ended.
type argsShape struct {
	depth int
	inStr bool
	esc   bool
	// closed: a container or string at the top level ended; a byte other
	// than white space after it makes the arguments never whole (broken).
	closed, broken bool
	// scalar: the top level is a number or literal (true, null…), whole
	// only by json.Valid (scalarWhole).
	scalar bool
	// valid is json.Valid of the arguments once closed (0: not run).
	valid int8
	// scanned counts the bytes json.Valid was run over (the work test).
	scanned int
}

// maxScalarArgs bounds the top-level scalar that whole checks with
// json.Valid: no tool's arguments are one (they are an object), and a
// longer one is taken as not whole, so that a stream of digits is not
// scanned again for each delta.
const maxScalarArgs = 64

// add follows s, the next delta of the arguments.
func (a *argsShape) add(s string) {
	for i := 0; i < len(s) && !a.broken; i++ {
		c := s[i]
		switch {
		case a.closed:
			if !jsonSpace(c) {
				a.broken = true
			}
		case a.inStr:
			switch {
			case a.esc:
				a.esc = false
			case c == '\\':
				a.esc = true
			case c == '"':
				a.inStr = false
				a.closed = a.depth == 0
			}
		case c == '"':
			a.inStr = true
			a.scalar = false
		case c == '{' || c == '[':
			a.depth++
			a.scalar = false
		case c == '}' || c == ']':
			if a.depth--; a.depth < 0 {
				a.broken = true
			}
			a.closed = a.depth == 0
		case jsonSpace(c):
			if a.scalar && a.depth == 0 {
				a.closed = true // the scalar ended: only white space may follow
				a.scalar = false
				a.valid = 0
			}
		case a.depth == 0:
			a.scalar = true // the top level is (or continues) a number or literal
		}
	}
}

// whole reports whether args, the arguments s followed, are one whole JSON
// value, as json.Valid(args) would.
func (a *argsShape) whole(args string) bool {
	switch {
	case a.broken, a.inStr:
		return false
	case a.scalar:
		if len(args) > maxScalarArgs {
			return false
		}
		a.scanned += len(args)
		return json.Valid([]byte(args))
	case !a.closed:
		return false
	}
	if a.valid == 0 {
		// Once per value: white space after it changes nothing, anything
		// else breaks it.
		a.scanned += len(args)
		a.valid = -1
		if json.Valid([]byte(args)) {
			a.valid = 1
		}
	}
	return a.valid == 1
}

func jsonSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
