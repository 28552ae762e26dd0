package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/routerhq/router/internal/jsonenc"
	"github.com/routerhq/router/internal/jsonfast"
)

// Fingerprint is the SHA-256 of the canonical form of the fields that define an
// intent (SPEC §2): operation, the prompt version and route as the caller asked
// for them, and the input. Canonical form: JSON with object keys sorted and no
// insignificant whitespace; numbers keep their written form.
func Fingerprint(operation, promptVersion, route string, input json.RawMessage) ([]byte, error) {
	if v, ok := jsonfast.Value(input); ok { // what the decoder below gives, faster
		return FingerprintValue(operation, promptVersion, route, v)
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("input is not valid JSON: %w", err)
	}
	return FingerprintValue(operation, promptVersion, route, v)
}

// FingerprintValue is Fingerprint of an input already decoded with
// json.Decoder.UseNumber (as contract.ParseJSON decodes), which keeps each
// number's written form.
func FingerprintValue(operation, promptVersion, route string, input any) ([]byte, error) {
	canon, err := canonical(operation, promptVersion, route, input)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon)
	return sum[:], nil
}

// canonical is the text Fingerprint hashes: what encoding/json's Marshal
// writes for {"operation", "prompt_version", "route", "input"} (it sorts map
// keys, at every level). It is written here directly for the values a
// decoder with UseNumber gives (objects, arrays, strings, json.Number, bools
// and null): Marshal's reflection and its sorting of each map through
// reflect.Value were 1.4% of the router's CPU per job. Any other value, or a
// json.Number that is not a number, goes to Marshal itself (and so do its
// errors). FuzzFingerprint checks the bytes are Marshal's.
func canonical(operation, promptVersion, route string, input any) ([]byte, error) {
	b := make([]byte, 0, 256)
	b = append(b, `{"input":`...)
	b, ok := appendCanonical(b, input)
	if !ok {
		return json.Marshal(map[string]any{
			"operation": operation, "prompt_version": promptVersion, "route": route, "input": input,
		})
	}
	b = append(b, `,"operation":`...)
	b = jsonenc.AppendString(b, operation)
	b = append(b, `,"prompt_version":`...)
	b = jsonenc.AppendString(b, promptVersion)
	b = append(b, `,"route":`...)
	b = jsonenc.AppendString(b, route)
	return append(b, '}'), nil
}

// appendCanonical appends v as encoding/json marshals it, object keys sorted;
// ok is false for a value it does not write (see canonical).
func appendCanonical(b []byte, v any) (_ []byte, ok bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		return jsonenc.AppendString(b, x), true
	case json.Number:
		n := string(x)
		if n == "" {
			n = "0" // as encoding/json writes the zero Number
		}
		if !isValidNumber(n) {
			return b, false
		}
		return append(b, n...), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, k)
			b = append(b, ':')
			if b, ok = appendCanonical(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendCanonical(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false
}

// isValidNumber is isValidNumber from Go's encoding/json/encode.go (Copyright
// 2010 The Go Authors; BSD-style licence, in Go's LICENSE file): whether s is
// a JSON number literal.
func isValidNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	default:
		return false
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = s[1:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}
