package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/routerhq/router/internal/jsonfast"
	"github.com/routerhq/router/internal/jsontext"
)

// ParseJSON decodes exactly one JSON value, numbers as json.Number so they keep
// the precision they were written with. Trailing data is an error.
//
// It decodes with goccy/go-json (jsonfast.Value) where that gives
// encoding/json's value, and with encoding/json (parseJSONStd) otherwise, for
// every error among them: whenever goccy fails (invalid or truncated JSON,
// data after the value, empty input, nesting deeper than 10000 levels, a
// panic), b is decoded again and the error described as before; an invalid
// output pays goccy's attempt on top.
//
// Why: ParseJSON runs twice per job, on the caller's input and on the model's
// output, and was about 2.3% of the router's CPU. For a job input of 117 bytes
// encoding/json takes about 3.0 µs and 18 allocations, goccy about 1.1 µs and
// 12; for a model output of 172 bytes 4.0 µs and 30 against 1.5 µs and 22
// (BenchmarkParseJSON, best runs on a busy 2-core VM; 2.5-3x in every run).
//
// No guard is needed for the value: FuzzParseJSONMatchesEncodingJSON, with
// duplicate and case-folded keys, invalid UTF-8, lone and paired surrogates,
// numbers of every form, nesting at and past the limit, trailing bytes and
// generated documents, found no input where goccy succeeds with another value
// than encoding/json's, or succeeds where encoding/json fails.
func ParseJSON(b []byte) (any, error) {
	if v, ok := jsonfast.Value(b); ok {
		return v, nil
	}
	return parseJSONStd(b)
}

// parseJSONStd is ParseJSON by encoding/json alone: its values and its errors
// are the ones ParseJSON gives.
func parseJSONStd(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, describeJSONError(err, b)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value at byte %d", dec.InputOffset())
	}
	return v, nil
}

func describeJSONError(err error, b []byte) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if i := se.Offset - 1; i >= 0 && i < int64(len(b)) && b[i] >= utf8.RuneSelf {
			// encoding/json names the offending byte as if it were a
			// character of its own ('ï' for the first byte of a
			// byte-order mark): name the character the output holds.
			return fmt.Errorf("invalid JSON at byte %d: %s is not allowed here", se.Offset, describeRune(b[i:]))
		}
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if len(bytes.TrimSpace(b)) == 0 {
			return errors.New("empty output: expected a JSON value")
		}
		return fmt.Errorf("truncated JSON: input ends at byte %d before the value is complete", len(b))
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

// describeRune names the character b starts with, which is not ASCII.
func describeRune(b []byte) string {
	r, size := utf8.DecodeRune(b)
	switch {
	case r == utf8.RuneError && size <= 1:
		return fmt.Sprintf("byte 0x%02X (not UTF-8)", b[0])
	case r == '\ufeff':
		return "character U+FEFF (a byte-order mark)"
	case unicode.IsPrint(r):
		return fmt.Sprintf("character U+%04X %q", r, r)
	}
	return fmt.Sprintf("character U+%04X", r)
}

// JSONSpace is the whitespace JSON allows around a value (RFC 8259): space,
// tab, line feed and carriage return. Other spaces (U+00A0, U+0085, U+2028,
// U+3000, ...) are not JSON: an answer that ends with one does not parse in
// a caller's JSON reader, so it is not trimmed but judged (json.syntax).
const JSONSpace = " \t\r\n"

// TrimJSONSpace is s without the JSON whitespace (JSONSpace) around it.
func TrimJSONSpace(s string) string { return strings.Trim(s, JSONSpace) }

// StripFence returns the text inside a single markdown code fence around the
// whole of s (JSON whitespace around it and around the text inside trimmed):
// an opening ``` whose language tag is empty or json (any case), on a line
// of its own, and a closing ``` at the end, with no other line inside that
// starts with ```. Otherwise it returns s and false. The validator
// (allow_fenced) and chat's response_format json_object judge an answer by
// the same rule.
func StripFence(s string) (inner string, fenced bool) {
	s = TrimJSONSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s, false
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return s, false
	}
	if lang := TrimJSONSpace(s[3:nl]); lang != "" && !strings.EqualFold(lang, "json") {
		return s, false
	}
	body := s[nl+1 : len(s)-3]
	if fenceLine(body) {
		return s, false // more than one fence: not a single wrapped value
	}
	return TrimJSONSpace(body), true
}

// DuplicateKey is the json.duplicate_key violation for JSON text b (valid
// JSON) when an object in it has a key twice, nil otherwise. Readers differ
// on such an object (encoding/json keeps the last value, others the first,
// some refuse it), so it is refused as the provider's, as json.syntax is,
// whatever the value that passed would have been.
func DuplicateKey(b []byte) *Violation {
	e := jsontext.DuplicateKey(b)
	if e == nil {
		return nil
	}
	path := e.Pointer
	if path == "" {
		path = "$"
	}
	return &Violation{Rule: "json.duplicate_key", Path: path, Message: e.Error() + "; JSON readers differ on which value such an object holds, so an object must name each key once"}
}

// fenceLine reports whether a line of body starts with ``` (after spaces): a
// fence of its own. Backticks elsewhere, as inside a JSON string ("run
// ```make```"), are not one: a JSON string cannot span lines, so a ``` that
// only blanks precede on its line is outside every string.
func fenceLine(body string) bool {
	for i := 0; ; {
		j := strings.Index(body[i:], "```")
		if j < 0 {
			return false
		}
		j += i
		k := j
		for k > 0 && (body[k-1] == ' ' || body[k-1] == '\t') {
			k--
		}
		if k == 0 || body[k-1] == '\n' || body[k-1] == '\r' {
			return true
		}
		i = j + 3
	}
}
