package jsontext

import (
	"encoding/json"
	"strings"
	"testing"
)

// The limits of PostgreSQL 15's numeric, as its jsonb input enforces them
// (CheckNumericRange, checked against a server in internal/store's
// TestNumberRangeAgreesWithPostgreSQL): at most 131072 digits before the
// point and 16383 after, counting the exponent, and no exponent of
// ±1073741823 or more. CheckNumbers refuses all of them, and more (see
// numbers_written_test.go).
func TestCheckNumbersFindsNumbersNumericCannotHold(t *testing.T) {
	zeros := strings.Repeat
	for in, bad := range map[string]bool{
		`1e400000`:                              true,
		`{"a":1e400000}`:                        true,
		`{"a":-1E+400000}`:                      true,
		`1e131071`:                              false,
		`9e131071`:                              false,
		`1e131072`:                              true,
		`10e131070`:                             false,
		`10e131071`:                             true,
		`0.1e131072`:                            false,
		`0.1e131073`:                            true,
		`123.456e131069`:                        false,
		`123.456e131070`:                        true,
		`1e-16383`:                              false,
		`1e-16384`:                              true,
		`1.5e-16382`:                            false,
		`1.5e-16383`:                            true,
		`0e-16383`:                              false,
		`0e-16384`:                              true,
		`0e400000`:                              false,
		`0e1073741822`:                          false,
		`0e1073741823`:                          true,
		`-0e-1073741823`:                        true,
		`1e99999999999999999999999`:             true,
		`0e0000000000000000000000000001`:        false,
		`1` + zeros("0", 131071):                false,
		`1` + zeros("0", 131072):                true,
		`1.` + zeros("0", 16383):                false,
		`1.` + zeros("0", 16384):                true,
		`0.` + zeros("0", 16382) + `1`:          false,
		`0.` + zeros("0", 16383) + `1`:          true,
		`[1,2,3.5,-4e10,1e-300,123456789e1000]`: false,
		`{"e":12345,"x":"1e400000","y":"3e999999"}`: false,
		`{"s":"\"1e400000\"","n":1e400000}`:         true,
		`{"s":"a\\","n":1e400000}`:                  true,
		`"\\\"" 1e400000`:                           true,
	} {
		if got := CheckNumericRange([]byte(in)) != nil; got != bad {
			t.Errorf("CheckNumericRange(%.40q) out of range=%v, want %v", in, got, bad)
		}
		if bad && CheckNumbers([]byte(in)) == nil {
			t.Errorf("CheckNumbers(%.40q) = nil: it must refuse every number out of range", in)
		}
	}
}

// The error names the number, its member and its offset: what a caller needs
// to find and fix it.
func TestCheckNumbersNamesTheMember(t *testing.T) {
	for in, want := range map[string]NumberError{
		`{"response_format":{"json_schema":{"schema":{"type":"number","maximum":1e400000}}}}`: {
			Offset: 71, Path: "response_format.json_schema.schema.maximum", Number: "1e400000", Reason: "400001 digits before the decimal point"},
		`{"input":{"items":[{"q":1},{"q":2e-20000}]}}`: {
			Offset: 32, Path: "input.items[1].q", Number: "2e-20000", Reason: "20000 digits after the decimal point"},
		`[0, 0e-1073741823]`:           {Offset: 4, Path: "[1]", Number: "0e-1073741823", Reason: "an exponent beyond ±1073741822"},
		`{"a.b":{"":1e200000}}`:        {Offset: 11, Path: `["a.b"][""]`, Number: "1e200000", Reason: "200001 digits before the decimal point"},
		`1e` + strings.Repeat("9", 40): {Offset: 0, Path: "", Number: "1e" + strings.Repeat("9", 22) + "…", Reason: "an exponent beyond ±1073741822"},
	} {
		got := CheckNumbers([]byte(in))
		if got == nil || *got != want {
			t.Errorf("CheckNumbers(%.50q) = %+v, want %+v", in, got, want)
		}
	}
	e := CheckNumbers([]byte(`{"input":{"n":1e400000}}`))
	if msg := e.Error(); !strings.Contains(msg, "input.n") || !strings.Contains(msg, "1e400000") || !strings.Contains(msg, "131072") {
		t.Fatalf("message %q: want the member, the number and the limit", msg)
	}
}

// The hot path (every fourth byte, then runs of digits) and the exact walk of
// the whole text agree on every JSON text: a number the hot path skips cannot
// be out of range.
func FuzzCheckNumbersAgreesWithFullScan(f *testing.F) {
	for _, s := range []string{`1e400000`, `{"a":[1,2e-16384,"x"]}`, `"1e400000"`, `[10e131071]`, `{"k":0.` + strings.Repeat("0", 9000) + `1e-8000}`,
		`[1234,56789e1234]`, `{"e1e99999":1}`, `[1.5e-16383]`, `[0e1073741823]`,
		`[1e1006]`, `{"a":"1e131000","b":1e1005}`, `[` + strings.Repeat("1e999,", 1060) + `1]`, `{"x":"9e99` + strings.Repeat(",9e999", 1100) + `"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, full := CheckNumbers(b), scanNumbers(b, false)
		if !json.Valid(b) {
			return // both must only not panic
		}
		if (fast == nil) != (full == nil) || fast != nil && *fast != *full {
			t.Fatalf("CheckNumbers = %+v, the full scan = %+v", fast, full)
		}
	})
}

// A text without numbers out of range costs a look at every fourth byte.
func BenchmarkCheckNumbers(b *testing.B) {
	text := []byte(`{"model":"default","messages":[{"role":"user","content":"` + strings.Repeat("Order 4711 of 2026-12-02 costs 12.50 EUR; ", 400) + `"}],"temperature":0.2}`)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if CheckNumbers(text) != nil {
			b.Fatal("out of range")
		}
	}
}
