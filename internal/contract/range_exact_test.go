package contract_test

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/routerhq/router/internal/contract"
)

// A range compares a number with its bounds by exact decimal value: as a
// float64, -1e-400 reads as -0 (passing min 0) and 100.00000000000000001 as
// 100 (passing max 100).
func TestRange_ComparesExactly(t *testing.T) {
	val := mustValidator(t, schemaFor(`"q":{"type":"number"}`, `"p":{"type":"number"}`, `"f":{"type":"number"}`, `"i":{"type":"integer"}`),
		contract.Rules{Ranges: map[string]contract.Range{
			"/q": {Min: ptr(0.0)}, "/p": {Max: ptr(100.0)}, "/f": {Max: ptr(0.1)}, "/i": {Max: ptr(9007199254740992.0)},
		}})
	for out, want := range map[string][]v{
		`{"q":-1e-400}`:               {{"range", "/q"}},
		`{"q":-1e-330}`:               {{"range", "/q"}},
		`{"q":-0}`:                    nil,
		`{"q":0e-5}`:                  nil,
		`{"p":100.00000000000000001}`: {{"range", "/p"}},
		`{"p":100.000}`:               nil,
		`{"f":0.10000000000000001}`:   {{"range", "/f"}},
		`{"f":0.1}`:                   nil,
		`{"i":9007199254740993}`:      {{"range", "/i"}},
		`{"i":9007199254740992}`:      nil,
		`{"p":1e400}`:                 {{"range", "/p"}},
		`{"q":1e400}`:                 nil,
	} {
		t.Run(out, func(t *testing.T) { checkCase(t, val, out, want, "") })
	}
	checkCase(t, val, `{"q":-1e-400}`, []v{{"range", "/q"}}, "value -1e-400 is below the minimum 0")
}

// With the shipped invoice prompt (quantity: min 0), a quantity of -1e-400
// must fail the range rule, not pass as -0 and be stored.
func TestRange_InvoiceNegativeQuantityRefused(t *testing.T) {
	val := loadExample(t, "invoice")
	out := `{"invoice_number":"INV-1","currency":"EUR","issue_date":"2024-03-01","due_date":"2024-03-31",
	  "line_items":[{"description":"Consulting","quantity":-1e-400,"unit_price":150,"amount":0}],"total":0}`
	checkCase(t, val, out, []v{{"range", "/line_items/0/quantity"}}, "")
}

// A bound decoded from YAML is compared as written, not as its float64.
func TestRange_YAMLBoundAsWritten(t *testing.T) {
	var rules contract.Rules
	src := "ranges:\n  /p: {max: 100.00000000000000001}\n  /h: {min: 0x10, max: 1_000}\n  /b: {min: 12345678901234567890123, max: 12345678901234567890125}\n  /o: {min: -.inf, max: 5}\n"
	if err := yaml.Unmarshal([]byte(src), &rules); err != nil {
		t.Fatal(err)
	}
	val := mustValidator(t, schemaFor(`"p":{"type":"number"}`, `"h":{"type":"number"}`, `"b":{"type":"number"}`, `"o":{"type":"number"}`), rules)
	checkCase(t, val, `{"p":100.00000000000000001,"h":16,"b":12345678901234567890124,"o":-1e300}`, nil, "")
	checkCase(t, val, `{"p":100.00000000000000002,"h":1000.5,"b":12345678901234567890126,"o":6}`,
		[]v{{"range", "/b"}, {"range", "/h"}, {"range", "/o"}, {"range", "/p"}}, "value 100.00000000000000002 is above the maximum 100.00000000000000001")

	if lo, hi := rules.Ranges["/p"].Written(); lo != "" || hi != "100.00000000000000001" {
		t.Errorf("Written() = %q, %q", lo, hi)
	}
	if lo, hi := rules.Ranges["/h"].Written(); lo != "" || hi != "" {
		t.Errorf("Written() of bounds a float64 holds = %q, %q", lo, hi)
	}

	// A bound changed in Go after decoding is compared by its new value.
	r := rules.Ranges["/p"]
	r.Max = ptr(5.0)
	val = mustValidator(t, schemaFor(`"p":{"type":"number"}`), contract.Rules{Ranges: map[string]contract.Range{"/p": r}})
	checkCase(t, val, `{"p":6}`, []v{{"range", "/p"}}, "above the maximum 5")
	if _, hi := r.Written(); hi != "" {
		t.Errorf("Written() of a changed bound = %q", hi)
	}
}

// Range keeps refusing unknown keys and values of the wrong type in the
// strict decoder's words, and refuses bounds it cannot compare.
func TestRange_YAMLErrors(t *testing.T) {
	for src, want := range map[string]string{
		"ranges: {/p: {min: 1, mx: 2}}":  "line 1: field mx not found in type contract.Range",
		"ranges: {/p: {min: lots}}":      "cannot unmarshal !!str `lots` into float64",
		"ranges: {/p: {min: 010}}":       "leading zero",
		"ranges: {/p: {min: 1, min: 2}}": `mapping key "min" already defined`,
	} {
		var rules contract.Rules
		dec := yaml.NewDecoder(strings.NewReader(src))
		dec.KnownFields(true)
		if err := dec.Decode(&rules); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to say %q", src, err, want)
		}
	}
	_, err := contract.NewValidator(schemaFor(`"p":{"type":"number"}`), "", contract.Rules{Ranges: map[string]contract.Range{"/p": {Min: ptr(2.0), Max: ptr(1.0)}}})
	if err == nil || !strings.Contains(err.Error(), "min 2 is greater than max 1") {
		t.Errorf("min above max: %v", err)
	}
}
