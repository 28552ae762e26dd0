package jsontext

// TopMembers calls yield with the name of each member of the object b holds
// at its top level, in order, until yield returns false: the bytes between
// the name's quotes, escapes as written (escaped says it holds one). b must
// be valid JSON; one that is not an object has no members. It allocates
// nothing and decodes no value: members' values are skipped over.
func TopMembers(b []byte, yield func(name []byte, escaped bool) bool) {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return
	}
	for i = skipSpace(b, i+1); i < len(b) && b[i] == '"'; i = skipSpace(b, i+1) {
		end, escaped := stringSpan(b, i)
		if end-1 <= i {
			return // not valid JSON
		}
		if !yield(b[i+1:end-1], escaped) {
			return
		}
		i = skipSpace(b, end) // at ':'
		i = skipValue(b, skipSpace(b, i+1))
		i = skipSpace(b, i)
		if i == len(b) || b[i] != ',' {
			return
		}
	}
}

// skipSpace is the index of the first byte of b at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipValue is the index just past the JSON value (valid) that starts at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = stringEnd(b, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the object holding a scalar
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}
