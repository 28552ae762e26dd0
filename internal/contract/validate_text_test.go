package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// Validate (a prompt job's answer, stored as a JSON value in jsonb) still
// refuses what jsonb cannot hold; ValidateText (a chat answer, stored as a
// string of the completion) judges the same text against the schema alone.
func TestValidateRefusesUnstorableValidateTextDoesNot(t *testing.T) {
	v, err := contract.NewRequestValidator([]byte(`{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"number","minimum":0}}}`), "s", contract.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{`{"s":"nul \u0000"}`, `{"s":"\ud83d"}`, `{"s":"\udc00"}`, `{"n":1e2000}`} {
		if _, vs := v.Validate(a); len(vs) != 1 || vs[0].Rule != "json.unstorable" {
			t.Errorf("Validate(%s) = %v, want json.unstorable (a prompt job stores it as jsonb)", a, vs)
		}
		if _, vs := v.ValidateText(a); len(vs) != 0 {
			t.Errorf("ValidateText(%s) = %v, want it to pass", a, vs)
		}
	}
}

// An answer kept as text is not bounded by jsonb's numbers, but the schema
// check reads a number exactly (math/big), and cannot read 1e999999999 at
// all (it panicked): such a number is refused as json.number_range, and one
// the checker reads cheaply is judged.
func TestValidateTextBoundsNumbersTheSchemaReads(t *testing.T) {
	off := false
	v, err := contract.NewRequestValidator([]byte(`{"type":"object","properties":{"n":{"type":"number","multipleOf":0.5}},"additionalProperties":{"type":"integer"}}`), "s", contract.Rules{NoExtraKeys: &off})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{`{"n":1e999999999}`, `{"n":1e-999999999}`, `{"x":1e131072}`, `{"n":1e99999999999999999999}`,
		`{"n":[` + strings.TrimSuffix(strings.Repeat("1e130000,", 9), ",") + `]}`} {
		if _, vs := v.ValidateText(a); len(vs) != 1 || vs[0].Rule != "json.number_range" {
			t.Errorf("ValidateText(%.60s) = %v, want json.number_range", a, vs)
		}
	}
	for _, a := range []string{`{"n":1e2000}`, `{"n":1.5}`, `{"x":1e131071}`, `{"n":-25e-1}`} {
		if _, vs := v.ValidateText(a); len(vs) != 0 {
			t.Errorf("ValidateText(%s) = %v, want it to pass", a, vs)
		}
	}
	if _, vs := v.ValidateText(`{"n":1.25}`); len(vs) != 1 || vs[0].Rule != "schema.multipleOf" {
		t.Errorf("ValidateText(1.25) = %v, want schema.multipleOf", vs)
	}
}

// An answer may nest MaxAnswerDepth levels, not one more; brackets inside
// strings are not nesting.
func TestAnswerDepthBound(t *testing.T) {
	v, err := contract.NewValidator([]byte(`{"type":"object","properties":{"data":{}},"required":["data"]}`), "out.json", contract.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	nest := func(levels int) string { // with the answer's own object
		return `{"data":` + strings.Repeat("[", levels-1) + `"[[{{\"[["` + strings.Repeat("]", levels-1) + `}`
	}
	for _, validate := range []func(string) ([]byte, []contract.Violation){
		func(s string) ([]byte, []contract.Violation) { d, vs := v.Validate(s); return d, vs },
		func(s string) ([]byte, []contract.Violation) { d, vs := v.ValidateText(s); return d, vs },
	} {
		if _, vs := validate(nest(contract.MaxAnswerDepth)); len(vs) != 0 {
			t.Errorf("%d levels: %v, want it to pass", contract.MaxAnswerDepth, vs)
		}
		if _, vs := validate(nest(contract.MaxAnswerDepth + 1)); len(vs) != 1 || vs[0].Rule != "json.too_deep" {
			t.Errorf("%d levels: %v, want json.too_deep", contract.MaxAnswerDepth+1, vs)
		}
	}
}

// The router's format checkers still take what is of the format.
func TestFormatAssertionsTakeWhatIsOfTheFormat(t *testing.T) {
	cases := map[string][]string{
		"date-time": {"2024-01-01T10:20:30Z", "2024-02-29t23:59:60.123z", "2024-01-01T00:30:60+00:31", "1990-12-31T15:59:60-08:00"},
		"time":      {"09:00:00Z", "23:59:60Z", "12:00:00.5+01:00"},
		"date":      {"2024-02-29", "0001-01-01"},
		"ipv4":      {"0.0.0.0", "192.168.0.1", "255.255.255.255"},
		"ipv6":      {"::1", "::ffff:1.2.3.4", "2001:db8::8a2e:370:7334"},
		"hostname":  {"example.com", "a-b.example.com.", "xn--nxasmq6b.com", "localhost"},
		"email":     {"joe@example.com", "joe.bloggs+x@mail.example.com", "joe@[127.0.0.1]", "joe@[IPv6:::1]"},
		"uri":       {"https://example.com/a%20b?q=1#f", "urn:isbn:0451450523", "mailto:joe@example.com", "http://[::1]:80/"},
	}
	refused := map[string][]string{
		"date-time": {"2024-01-01 10:20:30Z", "2024-01-01T10:20:60Z", "2024-01-01T10:20:30", "2024-01-01T10:20:30+1:00"},
		"time":      {"24:00:00Z", "12:00:00.Z", "12:00:00+01:0x"},
		"date":      {"2023-02-29", "2024-1-01", "+024-01-01", "01/03/2024"},
		"ipv4":      {"1.2.3", "256.1.1.1", "01.1.1.1", "1.2.3.4 "},
		"ipv6":      {"1.2.3.4", "fe80::1%eth0", "::1::"},
		"hostname":  {"-a.com", "a-.com", "a..com", "a_b.com", ""},
		"email":     {"joe", "@example.com", "joe@-example.com", "joe@[1.2.3]"},
		"uri":       {"example.com", "https://example.com/é", "https://exa mple.com", "http://[1.2.3.4]/", "https://example.com/a\tb"},
	}
	off := false
	for format, values := range cases {
		v, err := contract.NewValidator([]byte(`{"type":"string","format":"`+format+`"}`), "out.json", contract.Rules{NoExtraKeys: &off})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range values {
			if _, vs := v.Validate(`"` + s + `"`); len(vs) != 0 {
				t.Errorf("format %s: %q is refused: %v", format, s, vs)
			}
		}
		for _, s := range refused[format] {
			if _, vs := v.Validate(`"` + strings.ReplaceAll(s, "\t", `\t`) + `"`); len(vs) == 0 {
				t.Errorf("format %s: %q passes", format, s)
			}
		}
	}
}
