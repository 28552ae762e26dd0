package store_test

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// filler sets every exported field it reaches to a non-zero value, taking
// strings, raw JSON, times, integers and floats in turn from lists of awkward
// ones; the offset shifts which field gets which, so that over several fills
// each field meets each value.
type filler struct {
	t *testing.T
	n int
}

var (
	fillStrings = []string{
		"plain",
		`<script>alert("x&y")</script>`,
		`back\slash "quoted" /slash`,
		"ctl\x00\x01\x1f\b\f\n\r\t\x7f end",
		"line\u2028sep\u2029para",
		"héllo wörld 日本語 🎉",
		"bad\xffutf8\xc3( and cut \xe2\x80",
		"\xe2\x80\xa8",
	}
	fillRaw = []string{
		`{"a": 1, "b": [1, 2], "s": "<&>"}`,
		"\"line\u2028 sep\u2029\"",
		`[1, 2.5, -3e10, true, false, null, "x"]`,
		`{"nested": {"x": "é\u00e9 \"q\" \\ \u2028", "y": {}}}`,
		`42`,
		" { \"padded\" : true,\n\t\"t\": [ ] } ",
		`{"k": "a\\", "z": "b c", "q": "\" x \""}`,
	}
	fillFloats = []float64{0.000001234, 1e21, 12.5, 0, 1e-7, -3.25, 123456789.125, 0.1, 5e-324, 1.5e300}
	fillInts   = []int64{1, -7, 1<<53 + 1, 9223372036854775807, 42, -9223372036854775808}
	fillTimes  = []time.Time{
		time.Date(2024, 3, 5, 7, 8, 9, 0, time.UTC),
		time.Date(2024, 3, 5, 7, 8, 9, 123456789, time.UTC),
		time.Date(2025, 12, 31, 23, 59, 59, 120000000, time.FixedZone("IST", 5*3600+1800)),
		time.Date(1999, 1, 2, 3, 4, 5, 1, time.FixedZone("PST", -8*3600)),
		time.Date(2030, 6, 1, 0, 0, 0, 500, time.Local),
	}
)

var (
	rawType  = reflect.TypeFor[json.RawMessage]()
	timeType = reflect.TypeFor[time.Time]()
)

func (f *filler) next() int { f.n++; return f.n }

func (f *filler) fill(v reflect.Value) {
	f.t.Helper()
	switch {
	case v.Type() == rawType:
		v.SetBytes([]byte(fillRaw[f.next()%len(fillRaw)]))
		return
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(fillTimes[f.next()%len(fillTimes)]))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fillStrings[f.next()%len(fillStrings)])
	case reflect.Int, reflect.Int64, reflect.Int32:
		n := fillInts[f.next()%len(fillInts)]
		if v.OverflowInt(n) {
			n = int64(f.n)
		}
		v.SetInt(n)
	case reflect.Float64:
		v.SetFloat(fillFloats[f.next()%len(fillFloats)])
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range v.Len() {
			f.fill(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
	case reflect.Map:
		key, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		f.fill(key)
		f.fill(val)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(key, val)
	case reflect.Interface:
		v.Set(reflect.ValueOf(fillStrings[f.next()%len(fillStrings)]))
	default:
		f.t.Fatalf("filler: no value for a field of type %s; teach the filler (and AppendJSON) about it", v.Type())
	}
}

// clearRefs sets every pointer and every json.RawMessage it reaches to nil,
// keeping the slices and the structs in them.
func clearRefs(v reflect.Value) {
	switch {
	case v.Type() == rawType:
		v.SetBytes(nil)
	case v.Kind() == reflect.Pointer:
		v.SetZero()
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			clearRefs(v.Index(i))
		}
	case v.Kind() == reflect.Struct && v.Type() != timeType:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				clearRefs(v.Field(i))
			}
		}
	}
}

func checkJobJSON(t *testing.T, name string, j *store.Job) {
	t.Helper()
	want, err := json.Marshal(j)
	if err != nil {
		t.Fatalf("%s: json.Marshal: %v", name, err)
	}
	prefix := []byte("prefix:")
	got := j.AppendJSON(append([]byte(nil), prefix...))
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("%s: AppendJSON lost what the buffer held: %q", name, got)
	}
	got = got[len(prefix):]
	if !json.Valid(got) {
		t.Fatalf("%s: AppendJSON wrote invalid JSON:\n%s", name, got)
	}
	if !bytes.Equal(got, want) {
		g, w := string(got), string(want)
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		t.Fatalf("%s: AppendJSON differs from json.Marshal at byte %d:\n got …%s\nwant …%s", name, i, g[max(0, i-60):min(len(g), i+120)], w[max(0, i-60):min(len(w), i+120)])
	}
}

func TestJobAppendJSONMatchesEncodingJSON(t *testing.T) {
	if _, ok := any(&store.Job{}).(json.Marshaler); ok {
		t.Fatal("*store.Job implements json.Marshaler: encoding/json would compact its output again everywhere; use AppendJSON")
	}
	if got := (*store.Job)(nil).AppendJSON(nil); string(got) != "null" {
		t.Fatalf("nil job: %s", got)
	}

	// Every exported field set, over enough offsets that each field meets
	// each string, raw value, time and float.
	for off := range 2 * len(fillStrings) * len(fillFloats) {
		var j store.Job
		f := &filler{t: t, n: off}
		f.fill(reflect.ValueOf(&j).Elem())
		if len(j.Attempts) == 0 || len(j.RaceEvents) == 0 || j.CostUSD == nil || j.Attempts[0].ResponseModel == nil {
			t.Fatal("filler left something empty")
		}
		checkJobJSON(t, "filled", &j)
		if off == 0 {
			// The omitempty members are present, and so is a sample of the
			// rest, so the comparison above did see them.
			want, _ := json.Marshal(&j)
			for _, m := range []string{`"params":`, `"finished_at":`, `"cost_usd":`, `"lost_cost_usd":`, `"response_model":`, `"race_events":[{`} {
				if !bytes.Contains(want, []byte(m)) {
					t.Fatalf("filled job lacks %s: %s", m, want)
				}
			}
		}

		// The same job with every pointer and RawMessage nil.
		clearRefs(reflect.ValueOf(&j).Elem())
		if j.Input != nil || j.Attempts[0].StartedAt != nil || j.RaceEvents[1].Usage != nil {
			t.Fatal("clearRefs left something set")
		}
		checkJobJSON(t, "nil pointers and raw messages", &j)

		// Empty, not nil, lists.
		j.Attempts, j.RaceEvents = []store.Attempt{}, []store.RaceEvent{}
		checkJobJSON(t, "empty lists", &j)
	}

	checkJobJSON(t, "zero job", &store.Job{})
	checkJobJSON(t, "empty attempts", &store.Job{Attempts: []store.Attempt{}})
	checkJobJSON(t, "zero attempt and race event", &store.Job{Attempts: make([]store.Attempt, 1), RaceEvents: make([]store.RaceEvent, 1)})
	checkJobJSON(t, "long string", &store.Job{ID: strings.Repeat("a<é\u2028\"", 1000), Result: json.RawMessage(strings.Repeat(" ", 10) + `"` + strings.Repeat("&\u2029", 500) + `"`)})
}

// benchJob is a typical finished job: one won attempt with its usage, an
// object result, the routing decisions and the input as jsonb returns them
// (with a space after each colon and comma), no race events.
func benchJob() *store.Job {
	created := time.Date(2026, 1, 14, 9, 30, 12, 123456000, time.UTC)
	started := created.Add(3 * time.Millisecond)
	finished := created.Add(812*time.Millisecond + 456*time.Microsecond)
	expires := created.Add(24 * time.Hour)
	latency := int64(809)
	respID := "chatcmpl-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	respModel := "gpt-4o-mini-2024-07-18"
	completedBy := "01946b2f-6c1e-7a3b-9d4e-5f6a7b8c9d0e"
	cost, lost := 0.000412, 0.0
	return &store.Job{
		ID:             "01946b2f-6c1d-7f2a-8b3c-4d5e6f708192",
		Owner:          "tenant-acme",
		Operation:      "triage",
		IdempotencyKey: "order-4711-triage",
		PromptVersion:  "triage@3",
		Route:          "default",
		Input:          json.RawMessage(`{"body": "The reset link in the email expired before I could use it, and now the login page says my account is locked.", "subject": "Cannot log in", "customer_id": "C-10293"}`),
		Params:         json.RawMessage(`{}`),
		State:          store.JobSucceeded,
		Version:        4,
		CreatedAt:      created,
		UpdatedAt:      finished,
		FinishedAt:     &finished,
		KeyExpiresAt:   &expires,
		Result:         json.RawMessage(`{"summary": "Customer cannot log in: the password reset link expired and the account is now locked.", "category": "account_access", "priority": "high", "sentiment": "frustrated", "next_steps": ["unlock account", "send new reset link", "confirm by email"], "confidence": 0.92}`),
		CompletedBy:    &completedBy,
		Routing:        json.RawMessage(`{"plan": [{"model": "gpt-4o-mini", "provider": "openai", "role": "primary", "weight": 1}, {"model": "claude-3-5-haiku", "provider": "anthropic", "role": "failover", "weight": 1}], "route": "default", "reason": "primary healthy", "breakers": {"openai": "closed", "anthropic": "closed"}, "hedge_after_ms": 1000, "max_attempts": 3, "budget_usd": 0.05, "schema": "triage@3", "decisions": [1, 2]}`),
		Attempts: []store.Attempt{{
			ID:                 completedBy,
			Seq:                1,
			Provider:           "openai",
			Model:              "gpt-4o-mini",
			ResponseModel:      &respModel,
			Role:               store.RolePrimary,
			State:              store.AttemptWon,
			ReadVersion:        2,
			CreatedAt:          created.Add(time.Millisecond),
			StartedAt:          &started,
			FinishedAt:         &finished,
			LatencyMS:          &latency,
			Usage:              json.RawMessage(`{"input_tokens": 412, "output_tokens": 96, "total_tokens": 508}`),
			ProviderResponseID: &respID,
			CostUSD:            &cost,
		}},
		CostUSD:     &cost,
		LostCostUSD: &lost,
	}
}

func BenchmarkJobJSON(b *testing.B) {
	job := benchJob()
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = json.NewEncoder(io.Discard).Encode(job)
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf := job.AppendJSON(nil)
			_, _ = io.Discard.Write(append(buf, '\n'))
		}
	})
	// As the API writes it, into a buffer used again (from a sync.Pool).
	b.Run("AppendJSON-reused-buffer", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = append(job.AppendJSON(buf[:0]), '\n')
			_, _ = io.Discard.Write(buf)
		}
	})
}
