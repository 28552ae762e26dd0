package store

// A hand-written JSON encoder for Job, its Attempts and its RaceEvents: the
// job is what the tenant API answers with, and encoding/json spent most of
// that answer compacting and validating, byte by byte, every json.RawMessage
// field (input, result, routing, usage, errors) that PostgreSQL's jsonb had
// already validated, or that the router itself built with encoding/json;
// the rest went to reflection.
//
// AppendJSON writes what json.Marshal writes, byte for byte: the same members
// in the same order, the same omitempty, the same string escaping (HTML-safe,
// as encoding/json's default), times as Time.MarshalJSON, floats as
// encoding/json's float encoder, and each RawMessage compacted with <, >, &,
// U+2028 and U+2029 escaped, as encoding/json does — in one pass that does not
// validate it again. TestJobAppendJSONMatchesEncodingJSON fills every exported
// field by reflection and compares the two encodings byte for byte, so a field
// added to the structs and not here makes it fail. Job has no MarshalJSON on
// purpose: encoding/json would compact its output all over again; code that
// wants the fast path calls AppendJSON.
//
// Where encoding/json would fail (a time whose year is outside [0,9999], a
// NaN or infinite cost, a RawMessage that is not JSON) it writes nothing at
// all; AppendJSON writes the time as RFC 3339 anyway, null for the float, and
// the raw bytes as they are. None of these comes out of the database.

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends the job as a JSON object, as json.Marshal(j) would write
// it (see the top of this file), and returns the extended buffer. A nil job is
// null.
func (j *Job) AppendJSON(b []byte) []byte {
	if j == nil {
		return append(b, "null"...)
	}
	b = growFor(b, j)
	b = append(b, `{"id":`...)
	b = appendJSONString(b, j.ID)
	b = append(b, `,"owner":`...)
	b = appendJSONString(b, j.Owner)
	b = append(b, `,"operation":`...)
	b = appendJSONString(b, j.Operation)
	b = append(b, `,"idempotency_key":`...)
	b = appendJSONString(b, j.IdempotencyKey)
	b = append(b, `,"prompt_version":`...)
	b = appendJSONString(b, j.PromptVersion)
	b = append(b, `,"route":`...)
	b = appendJSONString(b, j.Route)
	b = append(b, `,"input":`...)
	b = appendRawJSON(b, j.Input)
	if len(j.Params) > 0 {
		b = append(b, `,"params":`...)
		b = appendRawJSON(b, j.Params)
	}
	b = append(b, `,"state":`...)
	b = appendJSONString(b, j.State)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, j.Version, 10)
	b = append(b, `,"created_at":`...)
	b = appendJSONTime(b, j.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendJSONTime(b, j.UpdatedAt)
	if j.FinishedAt != nil {
		b = append(b, `,"finished_at":`...)
		b = appendJSONTime(b, *j.FinishedAt)
	}
	b = append(b, `,"key_expires_at":`...)
	b = appendJSONTimePtr(b, j.KeyExpiresAt)
	b = append(b, `,"result":`...)
	b = appendRawJSON(b, j.Result)
	b = append(b, `,"completed_by":`...)
	b = appendJSONStringPtr(b, j.CompletedBy)
	b = append(b, `,"error":`...)
	b = appendJSONStringPtr(b, j.Error)
	b = append(b, `,"routing":`...)
	b = appendRawJSON(b, j.Routing)
	b = append(b, `,"attempts":`...)
	if j.Attempts == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range j.Attempts {
			if i > 0 {
				b = append(b, ',')
			}
			b = j.Attempts[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	b = append(b, `,"race_events":`...)
	if j.RaceEvents == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range j.RaceEvents {
			if i > 0 {
				b = append(b, ',')
			}
			b = j.RaceEvents[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	if j.CostUSD != nil {
		b = append(b, `,"cost_usd":`...)
		b = appendJSONFloat(b, *j.CostUSD)
	}
	if j.LostCostUSD != nil {
		b = append(b, `,"lost_cost_usd":`...)
		b = appendJSONFloat(b, *j.LostCostUSD)
	}
	return append(b, '}')
}

func (a *Attempt) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, a.ID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, int64(a.Seq), 10)
	b = append(b, `,"provider":`...)
	b = appendJSONString(b, a.Provider)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, a.Model)
	if a.ResponseModel != nil {
		b = append(b, `,"response_model":`...)
		b = appendJSONString(b, *a.ResponseModel)
	}
	b = append(b, `,"role":`...)
	b = appendJSONString(b, a.Role)
	b = append(b, `,"state":`...)
	b = appendJSONString(b, a.State)
	b = append(b, `,"read_version":`...)
	b = strconv.AppendInt(b, a.ReadVersion, 10)
	b = append(b, `,"created_at":`...)
	b = appendJSONTime(b, a.CreatedAt)
	b = append(b, `,"started_at":`...)
	b = appendJSONTimePtr(b, a.StartedAt)
	b = append(b, `,"finished_at":`...)
	b = appendJSONTimePtr(b, a.FinishedAt)
	b = append(b, `,"latency_ms":`...)
	b = appendJSONInt64Ptr(b, a.LatencyMS)
	b = append(b, `,"usage":`...)
	b = appendRawJSON(b, a.Usage)
	b = append(b, `,"provider_response_id":`...)
	b = appendJSONStringPtr(b, a.ProviderResponseID)
	b = append(b, `,"error":`...)
	b = appendRawJSON(b, a.Error)
	b = append(b, `,"validation_errors":`...)
	b = appendRawJSON(b, a.ValidationErrors)
	if a.CostUSD != nil {
		b = append(b, `,"cost_usd":`...)
		b = appendJSONFloat(b, *a.CostUSD)
	}
	return append(b, '}')
}

func (e *RaceEvent) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, e.ID, 10)
	b = append(b, `,"attempt_id":`...)
	b = appendJSONStringPtr(b, e.AttemptID)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, e.Kind)
	b = append(b, `,"provider":`...)
	b = appendJSONStringPtr(b, e.Provider)
	b = append(b, `,"latency_ms":`...)
	b = appendJSONInt64Ptr(b, e.LatencyMS)
	b = append(b, `,"usage":`...)
	b = appendRawJSON(b, e.Usage)
	b = append(b, `,"detail":`...)
	b = appendJSONStringPtr(b, e.Detail)
	b = append(b, `,"created_at":`...)
	b = appendJSONTime(b, e.CreatedAt)
	return append(b, '}')
}

// growFor makes room in b for about the whole job at once, so that appending
// it reallocates rarely: the raw members' lengths plus a generous allowance for
// member names, strings, times and numbers.
func growFor(b []byte, j *Job) []byte {
	n := 640 + len(j.Input) + len(j.Params) + len(j.Result) + len(j.Routing) +
		len(j.ID) + len(j.Owner) + len(j.IdempotencyKey)
	if j.Error != nil {
		n += len(*j.Error)
	}
	for i := range j.Attempts {
		a := &j.Attempts[i]
		n += 448 + len(a.Usage) + len(a.Error) + len(a.ValidationErrors) + len(a.Model)
	}
	for i := range j.RaceEvents {
		e := &j.RaceEvents[i]
		n += 256 + len(e.Usage)
		if e.Detail != nil {
			n += len(*e.Detail)
		}
	}
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		b = nb
	}
	return b
}

func appendJSONStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

func appendJSONInt64Ptr(b []byte, n *int64) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *n, 10)
}

func appendJSONTimePtr(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendJSONTime(b, *t)
}

// appendJSONTime writes t as Time.MarshalJSON does: RFC 3339 with as many
// fractional digits as needed, in quotes.
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendJSONFloat writes f as encoding/json writes a float64: like ES6's
// number to string, 'f' unless the magnitude is below 1e-6 or at least 1e21,
// and an exponent without a leading zero. NaN and infinities, which
// encoding/json refuses, are null.
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendRawJSON appends raw JSON as encoding/json does for a json.RawMessage:
// compacted (jsonb writes a space after every ':' and ','), and with <, >, &,
// U+2028 and U+2029 escaped (encoding/json does that even inside raw JSON). It
// does not validate: the raw members of a job are jsonb from PostgreSQL or
// JSON the router wrote with encoding/json. Nil or empty is null.
func appendRawJSON(b []byte, raw []byte) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	start, inString := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !rawSpecial[c] {
			continue
		}
		switch c {
		case '"':
			inString = !inString
		case '\\':
			i++ // the escaped character (ASCII) is not the string's end
		case ' ', '\t', '\n', '\r':
			if !inString {
				b = append(b, raw[start:i]...)
				start = i + 1
			}
		case 0xE2:
			if i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8 {
				b = append(b, raw[start:i]...)
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
				i += 2
				start = i + 1
			}
		default: // <, >, &
			b = append(b, raw[start:i]...)
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			start = i + 1
		}
	}
	return append(b, raw[start:]...)
}

// rawSpecial marks the bytes appendRawJSON looks at: string quotes and
// escapes, whitespace, <, >, & and the first byte of U+2028 and U+2029.
var rawSpecial = [256]bool{'"': true, '\\': true, ' ': true, '\t': true, '\n': true, '\r': true,
	'<': true, '>': true, '&': true, 0xE2: true}

const hexDigits = "0123456789abcdef"

// appendJSONString is appendString from Go's encoding/json/encode.go with
// escapeHTML set (Copyright 2010 The Go Authors; BSD-style licence, in Go's
// LICENSE file): control characters, ", \, <, > and & escaped, invalid UTF-8
// as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, src string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		if b := src[i]; b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				// This encodes bytes < 0x20 except for \b, \f, \n, \r and \t,
				// and <, > and &.
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(src[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 is LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR: valid in
		// JSON strings, but not in JavaScript (JSONP), so escaped.
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, src[start:]...)
	return append(dst, '"')
}

// htmlSafe is encoding/json's htmlSafeSet: the ASCII bytes that need no escape
// in a string, which are all but the control characters, ", \, <, > and &.
var htmlSafe = func() (s [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		s[c] = true
	}
	for _, c := range `"\<>&` {
		s[c] = false
	}
	return s
}()
