package contract_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// CheckValueAt judges a value at a pointer against the subschemas that
// surely apply there (properties, pattern and additional properties, items,
// prefixItems, $ref, allOf), and not at all where the schema cannot tell
// (an anyOf branch, an object that declares nothing, $dynamicRef); it says
// which segments surely index an array.
func TestSchemaCheckValueAt(t *testing.T) {
	s, err := contract.CompileSchema([]byte(`{
  "type": "object",
  "$defs": {"status": {"type": "string", "enum": ["open", "closed"]}},
  "properties": {
    "n": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
    "status": {"$ref": "#/$defs/status"},
    "obj": {"type": "object", "properties": {"k": {"type": "string"}}, "patternProperties": {"^p": {"type": "boolean"}}, "additionalProperties": {"type": "integer"}},
    "open": {"type": "object"},
    "alt": {"anyOf": [{"type": "object", "properties": {"v": {"type": "string"}}}, {"type": "object", "properties": {"v": {"type": "integer"}}}]},
    "dyn": {"$dynamicRef": "#/$defs/status"}
  },
  "allOf": [{"properties": {"n": {"maximum": 10}}}]
}`), "")
	if err != nil {
		t.Fatal(err)
	}
	show := func(fs []contract.ValueFailure) string {
		var out []string // each once: a $ref and its target both apply, and may fail alike
		for _, f := range fs {
			if l := strconv.Quote(f.Location) + ": " + f.Message; !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
		return strings.Join(out, "; ")
	}
	for _, c := range []struct {
		segs   []string
		value  any
		want   string // "": no failure
		arrays []bool
	}{
		{[]string{"n"}, mustParse(t, "3"), "", []bool{false}},
		{[]string{"n"}, mustParse(t, "3.5"), `"": expected integer, but got number`, []bool{false}},
		{[]string{"n"}, mustParse(t, "11"), `"": must be <= 10 but found 11`, []bool{false}},
		{[]string{"tags", "2"}, "x", "", []bool{false, true}},
		{[]string{"tags", "2"}, mustParse(t, "1"), `"": expected string, but got number`, []bool{false, true}},
		{[]string{"tags"}, mustParse(t, `["x", 1]`), `"/1": expected string, but got number`, []bool{false}},
		{[]string{"pair", "1"}, "s", `"": expected integer, but got string`, []bool{false, true}},
		{[]string{"status"}, "opne", `"": value must be one of "open", "closed"`, []bool{false}},
		{[]string{"obj", "k"}, mustParse(t, "1"), `"": expected string, but got number`, []bool{false, false}},
		{[]string{"obj", "px"}, "s", `"": expected boolean, but got string`, []bool{false, false}},
		{[]string{"obj", "other"}, "s", `"": expected integer, but got string`, []bool{false, false}},
		{[]string{"open", "any"}, "s", "", []bool{false, false}},
		{[]string{"alt", "v"}, mustParse(t, "true"), "", []bool{false, false}},
		{[]string{"dyn"}, mustParse(t, "1"), "", []bool{false}},
		{[]string{"tags", strconv.Itoa(contract.MaxValueIndex + 1)}, mustParse(t, "1"), "", []bool{false, false}},
	} {
		fs, arrays := s.CheckValueAt(c.segs, c.value)
		if got := show(fs); got != c.want || fmt.Sprint(arrays) != fmt.Sprint(c.arrays) {
			t.Errorf("CheckValueAt(%q, %v) = %s, arrays %v\nwant %s, arrays %v", c.segs, c.value, got, arrays, c.want, c.arrays)
		}
	}
}

func mustParse(t *testing.T, s string) any {
	t.Helper()
	v, err := contract.ParseJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
