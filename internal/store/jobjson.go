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
	"strconv"
	"time"

	"github.com/routerhq/router/internal/jsonenc"
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
	b = jsonenc.AppendString(b, j.ID)
	b = append(b, `,"owner":`...)
	b = jsonenc.AppendString(b, j.Owner)
	b = append(b, `,"operation":`...)
	b = jsonenc.AppendString(b, j.Operation)
	b = append(b, `,"idempotency_key":`...)
	b = jsonenc.AppendString(b, j.IdempotencyKey)
	b = append(b, `,"prompt_version":`...)
	b = jsonenc.AppendString(b, j.PromptVersion)
	b = append(b, `,"route":`...)
	b = jsonenc.AppendString(b, j.Route)
	b = append(b, `,"input":`...)
	b = jsonenc.AppendRaw(b, j.Input)
	if len(j.Params) > 0 {
		b = append(b, `,"params":`...)
		b = jsonenc.AppendRaw(b, j.Params)
	}
	b = append(b, `,"state":`...)
	b = jsonenc.AppendString(b, j.State)
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
	b = jsonenc.AppendRaw(b, j.Result)
	b = append(b, `,"completed_by":`...)
	b = appendJSONStringPtr(b, j.CompletedBy)
	b = append(b, `,"error":`...)
	b = appendJSONStringPtr(b, j.Error)
	b = append(b, `,"routing":`...)
	b = jsonenc.AppendRaw(b, j.Routing)
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
		b = jsonenc.AppendFloat(b, *j.CostUSD, 64)
	}
	if j.LostCostUSD != nil {
		b = append(b, `,"lost_cost_usd":`...)
		b = jsonenc.AppendFloat(b, *j.LostCostUSD, 64)
	}
	return append(b, '}')
}

func (a *Attempt) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonenc.AppendString(b, a.ID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, int64(a.Seq), 10)
	b = append(b, `,"provider":`...)
	b = jsonenc.AppendString(b, a.Provider)
	b = append(b, `,"model":`...)
	b = jsonenc.AppendString(b, a.Model)
	if a.ResponseModel != nil {
		b = append(b, `,"response_model":`...)
		b = jsonenc.AppendString(b, *a.ResponseModel)
	}
	b = append(b, `,"role":`...)
	b = jsonenc.AppendString(b, a.Role)
	b = append(b, `,"state":`...)
	b = jsonenc.AppendString(b, a.State)
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
	b = jsonenc.AppendRaw(b, a.Usage)
	b = append(b, `,"provider_response_id":`...)
	b = appendJSONStringPtr(b, a.ProviderResponseID)
	b = append(b, `,"error":`...)
	b = jsonenc.AppendRaw(b, a.Error)
	b = append(b, `,"validation_errors":`...)
	b = jsonenc.AppendRaw(b, a.ValidationErrors)
	if a.CostUSD != nil {
		b = append(b, `,"cost_usd":`...)
		b = jsonenc.AppendFloat(b, *a.CostUSD, 64)
	}
	return append(b, '}')
}

func (e *RaceEvent) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, e.ID, 10)
	b = append(b, `,"attempt_id":`...)
	b = appendJSONStringPtr(b, e.AttemptID)
	b = append(b, `,"kind":`...)
	b = jsonenc.AppendString(b, e.Kind)
	b = append(b, `,"provider":`...)
	b = appendJSONStringPtr(b, e.Provider)
	b = append(b, `,"latency_ms":`...)
	b = appendJSONInt64Ptr(b, e.LatencyMS)
	b = append(b, `,"usage":`...)
	b = jsonenc.AppendRaw(b, e.Usage)
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
	return jsonenc.AppendString(b, *s)
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
