package prompt

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"text/template"
)

// execute renders text as a prompt's message template over input.
func execute(t *testing.T, text, input string) (string, error) {
	t.Helper()
	tmpl, err := template.New("m").Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	data, err := decodeObject(json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	err = tmpl.Execute(&b, data)
	return b.String(), err
}

// Input numbers are json.Number, a string to text/template's built-ins:
// printf "%.2f" printed "%!f(json.Number=12.5)" into the prompt, gt .qty 10
// failed for every input ("incompatible types for comparison") and eq
// compared spellings. printf and the comparisons now take them as numbers.
func TestTemplate_InputNumbers(t *testing.T) {
	const input = `{"price": 12.5, "qty": 0, "qty2": 0.0, "big": 9007199254740993, "big2": 9007199254740992, "twelve": 12.0, "code": "10", "huge": 1e400, "tiny": 1e-400, "neg": -3, "name": "Ada", "list": [1, 2.50]}`
	cases := []struct{ tmpl, want string }{
		// printf: numeric verbs take the number, %v and %s its spelling.
		{`{{ printf "%.2f" .price }}`, "12.50"},
		{`{{ printf "%8.3f|%-6.1f|%e|%g" .price .price .price .price }}`, "  12.500|12.5  |1.250000e+01|12.5"},
		{`{{ printf "%d" .qty }}`, "0"},
		{`{{ printf "%d %05d %x %X %o %b %+d" .twelve .twelve .twelve .twelve .twelve .twelve .neg }}`, "12 00012 c C 14 1100 -3"},
		{`{{ printf "%v %s %q %6v" .price .twelve .price .qty }}`, `12.5 12.0 "12.5"      0`},
		{`{{ printf "%v" .list }}`, "[1 2.50]"},
		{`{{ printf "%.1f" .tiny }}`, "0.0"},
		{`{{ printf "%d" .big }}`, "9007199254740993"},
		{`{{ printf "%s has %d items" .name 3 }}`, "Ada has 3 items"},
		{`{{ printf "%x" .price }}`, "0x1.9p+03"},
		// Printing a number directly keeps its spelling, as before.
		{`{{ .twelve }} {{ .price }} {{ .big }} {{ .huge }}`, "12.0 12.5 9007199254740993 1e400"},
		// Comparisons: by value, exactly.
		{`{{ if gt .qty 10 }}bulk{{ else }}single{{ end }}`, "single"},
		{`{{ if ne .qty 0 }}has items{{ else }}empty{{ end }}`, "empty"},
		{`{{ eq .qty 0 }} {{ eq .qty2 0 }} {{ eq .qty .qty2 }} {{ eq .twelve 12 }} {{ eq .price 12.5 }} {{ eq .price 12 }}`, "true true true true true false"},
		{`{{ eq .qty 1 2 0 }} {{ eq .qty 1 2 3 }}`, "true false"},
		{`{{ lt .qty 1 }} {{ le .twelve 12 }} {{ gt .price 12 }} {{ ge .price 12.5 }} {{ lt .neg -3 }} {{ gt 13 .twelve }}`, "true true true true false true"},
		{`{{ gt .big .big2 }} {{ eq .big .big2 }} {{ gt .huge 1e300 }}`, "true false true"},
		{`{{ ne .price .twelve }} {{ ne .qty 0 }}`, "true false"},
		// An input number and a string: eq compares the spelling, as before.
		{`{{ eq .qty "0" }} {{ eq .qty2 "0" }}`, "true false"},
		// Everything else is the built-ins'.
		{`{{ eq .name "Ada" }} {{ lt .name "Bob" }} {{ eq .code "10" }} {{ gt 2 1 }} {{ eq .name "Bob" "Ada" }}`, "true true true true true"},
		{`{{ printf "%.2f" 2.5 }} {{ printf "%s" .code }}`, "2.50 10"},
		// if tests presence: a number, even 0, is true.
		{`{{ if .qty }}present{{ end }}`, "present"},
	}
	for _, c := range cases {
		got, err := execute(t, c.tmpl, input)
		if err != nil || got != c.want {
			t.Errorf("%s\n got %q, %v\nwant %q", c.tmpl, got, err, c.want)
		}
	}
}

// A number printf cannot format with the verb given, and an order asked
// between a number and a string, are render errors that say why, not text in
// the prompt or a silent comparison of spellings.
func TestTemplate_InputNumberErrors(t *testing.T) {
	const input = `{"price": 12.5, "qty": 9, "huge": 1e400, "bigint": 12345678901234567890, "name": "Ada"}`
	cases := []struct{ tmpl, want string }{
		{`{{ printf "%d" .price }}`, `printf "%d": %d needs a whole number within 64 bits, got 12.5`},
		{`{{ printf "%d" .bigint }}`, `%d needs a whole number within 64 bits, got 12345678901234567890`},
		{`{{ printf "%.2f" .huge }}`, `printf "%.2f": %f needs a number within a 64-bit float, got 1e400`},
		{`{{ gt .qty "10" }}`, `gt: cannot order the number 9 against the string "10"; compare a number with a number written without quotes (gt .qty 10)`},
		{`{{ lt "10" .qty }}`, `lt: cannot order the number 9 against the string "10"`},
		{`{{ eq .price true }}`, `incompatible types for comparison`},
		{`{{ lt .name 3 }}`, `incompatible types for comparison`},
		{`{{ eq .qty }}`, `missing argument for comparison`},
		{`{{ lt true false }}`, `invalid type for comparison`},
		{`{{ eq 1 1.0 }}`, `incompatible types for comparison: int and float64`}, // two literals: the built-in's rule
	}
	for _, c := range cases {
		got, err := execute(t, c.tmpl, input)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: rendered %q, error %v; want an error containing %q", c.tmpl, got, err, c.want)
		}
	}
}

// printf does not modify its arguments (text/template may reuse them).
func TestPrintf_KeepsArguments(t *testing.T) {
	args := []any{json.Number("1.5"), "x"}
	if s, err := printf("%.1f %s", args...); err != nil || s != "1.5 x" {
		t.Fatalf("printf = %q, %v", s, err)
	}
	if _, ok := args[0].(json.Number); !ok {
		t.Fatalf("args[0] is now %T", args[0])
	}
}
