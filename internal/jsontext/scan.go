package jsontext

// SkipSpace is the offset of the first byte of b at or after i that is not
// JSON whitespace: the package's scanner, for walks of valid JSON outside it
// (the chat endpoint's member-name check), so that there is one.
func SkipSpace(b []byte, i int) int { return skipSpace(b, i) }

// StringEnd is the offset just past the string that starts at b[i] (a
// quote), and whether it holds a backslash; len(b) when it does not end.
func StringEnd(b []byte, i int) (end int, escaped bool) { return stringSpan(b, i) }

// SkipValue is the offset just past the value (valid JSON) that starts at
// b[i].
func SkipValue(b []byte, i int) int { return skipValue(b, i) }
