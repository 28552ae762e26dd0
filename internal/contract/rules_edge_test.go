package contract_test

import (
	"math"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A rule path that cannot reach a value of the type the schema declares is a
// load error, like a misspelt property: it would otherwise check nothing.
func TestNewValidator_PathsThatCannotMatchTheSchema(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{
		"total":{"type":"number"},
		"note":{"type":["string","null"]},
		"flag":{"type":"boolean"},
		"point":{"type":"array","prefixItems":[{"type":"number"},{"type":"number"}]},
		"lines":{"type":"array","items":{"$ref":"#/$defs/line"}}},
		"$defs":{"line":{"type":"object","properties":{"qty":{"type":"number"},"name":{"type":"string"}}}}}`)
	tests := []struct {
		name  string
		rules contract.Rules
		want  string
	}{
		{"property of an array (the * forgotten)", contract.Rules{Ranges: map[string]contract.Range{"/lines/qty": {Min: ptr(0.0)}}},
			`ranges[/lines/qty]: path "/lines/qty": /lines is an array in the output schema, not an object: name its elements with * or an index (like /lines/*/qty)`},
		{"property of a number", contract.Rules{Enums: map[string][]any{"/total/currency": {"EUR"}}},
			`enums[/total/currency]: path "/total/currency": /total is a number in the output schema, so it has no property "currency"`},
		{"element of a nullable string", contract.Rules{Enums: map[string][]any{"/note/*": {"x"}}},
			`/note is a string or null in the output schema, not an array`},
		{"negative index", contract.Rules{Ranges: map[string]contract.Range{"/point/-1": {Min: ptr(0.0)}}},
			`ranges[/point/-1]: path "/point/-1": /point is an array in the output schema and "-1" is not an index`},
		{"range on a boolean", contract.Rules{Ranges: map[string]contract.Range{"/flag": {Min: ptr(0.0)}}},
			`ranges[/flag]: path "/flag" is a boolean in the output schema; this rule needs a number, a string or an array`},
		{"sum over a number", contract.Rules{Sums: []contract.SumRule{{Items: "/total", Field: "qty", Total: "/total"}}},
			`sums[0].items: path "/total" is a number in the output schema; this rule needs an array`},
		{"sum into a string", contract.Rules{Sums: []contract.SumRule{{Items: "/lines", Field: "qty", Total: "/note"}}},
			`sums[0].total: path "/note" is a string or null in the output schema; this rule needs a number`},
		{"product of a string field", contract.Rules{Products: []contract.ProductRule{{Items: "/lines", Result: "qty", Factors: []string{"qty", "name"}}}},
			`products[0].factors[1]: field "name" is a string in the output schema; this rule needs a number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("NewValidator panicked: %v", r)
					}
				}()
				_, err = contract.NewValidator(schema, "", tc.rules)
			}()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, tc.want)
			}
		})
	}

	// What the schema allows still loads: indexes, "*", nullable numbers,
	// schemas that say nothing about the type.
	ok := contract.Rules{
		Ranges: map[string]contract.Range{"/point/0": {Min: ptr(0.0)}, "/lines/*/qty": {Min: ptr(0.0)}, "/lines/0/name": {Max: ptr(9.0)}, "/note": {Max: ptr(9.0)}},
		Sums:   []contract.SumRule{{Items: "/lines", Field: "qty", Total: "/total"}},
	}
	if _, err := contract.NewValidator(schema, "", ok); err != nil {
		t.Fatal(err)
	}
	if _, err := contract.NewValidator([]byte(`{"type":"object","properties":{"any":{}}}`), "", contract.Rules{
		Ranges: map[string]contract.Range{"/any/x/0": {Min: ptr(0.0)}, "/any/*": {Min: ptr(0.0)}}}); err != nil {
		t.Fatal(err)
	}
}

// A value the schema allows to be null is not judged by ranges, products and
// sums: null is the schema's to allow, like an absent value.
func TestRules_NullIsTheSchemasBusiness(t *testing.T) {
	val := mustValidator(t, []byte(`{"type":"object","properties":{
		"discount":{"type":["number","null"]},
		"comment":{"type":["string","null"]},
		"total":{"type":["number","null"]},
		"lines":{"type":"array","items":{"type":"object","properties":{"q":{"type":["number","null"]},"p":{"type":"number"},"a":{"type":["number","null"]}}}}}}`),
		contract.Rules{
			Ranges:   map[string]contract.Range{"/discount": {Min: ptr(0.0)}, "/comment": {Min: ptr(3.0)}},
			Products: []contract.ProductRule{{Items: "/lines", Result: "a", Factors: []string{"q", "p"}}},
			Sums:     []contract.SumRule{{Items: "/lines", Field: "a", Total: "/total"}},
		})
	checkCase(t, val, `{"discount":null,"comment":null,"total":null,"lines":[{"q":null,"p":2,"a":5},{"q":1,"p":2,"a":null}]}`, nil, "")
	checkCase(t, val, `{"discount":-1,"comment":"ab","total":7,"lines":[{"q":2,"p":2,"a":5},{"q":1,"p":2,"a":null}]}`,
		[]v{{"range", "/comment"}, {"range", "/discount"}, {"product", "/lines/0/a"}, {"sum", "/total"}}, "")
}

// A number beyond float64 (1e400) passes "type": "number"; a rule that cannot
// compute with it (sum) says so instead of "got json.Number", and a range,
// which compares exact decimals, still judges it.
func TestRules_NumberBeyondFloat64(t *testing.T) {
	val := mustValidator(t, []byte(`{"type":"object","properties":{"n":{"type":"number"},"total":{"type":"number"},"lines":{"type":"array","items":{"type":"object","properties":{"a":{"type":"number"}}}}}}`),
		contract.Rules{Ranges: map[string]contract.Range{"/n": {Max: ptr(10.0)}}, Sums: []contract.SumRule{{Items: "/lines", Field: "a", Total: "/total"}}})
	_, vs := val.Validate(`{"n":1e400,"total":1,"lines":[{"a":-1e400}]}`)
	if len(vs) != 2 || vs[0].Path != "/n" || vs[0].Message != "value 1e400 is above the maximum 10" || vs[1].Path != "/lines/0/a" || !strings.Contains(vs[1].Message, "number -1e400 is too large") {
		t.Fatalf("violations %v", vs)
	}
}

// A fenced output whose JSON holds ``` inside a string (a model quoting code)
// is still one fenced value; a second fence is not.
func TestValidate_FenceAroundJSONWithBackticks(t *testing.T) {
	val := mustValidator(t, schemaFor(`"summary":{"type":"string"}`), contract.Rules{})
	out := "```json\n{\"summary\": \"Customer ran ```make build``` and it failed\"}\n```"
	if doc, vs := val.Validate(out); vs != nil || string(doc) != "{\"summary\":\"Customer ran ```make build``` and it failed\"}" {
		t.Fatalf("doc %s, violations %v", doc, vs)
	}
	checkCase(t, val, "```json\n{\"summary\":\"a\"}\n```\nor\n```json\n{\"summary\":\"b\"}\n```", []v{{"json.syntax", "$"}}, "")
	checkCase(t, val, "```json\n{\"summary\":\"a\"}\n  ```\n```", []v{{"json.syntax", "$"}}, "")
	strict := mustValidator(t, schemaFor(`"summary":{"type":"string"}`), contract.Rules{AllowFenced: ptr(false)})
	checkCase(t, strict, out, []v{{"json.fenced", "$"}}, "")
}

// tolerance: 0 means exactly (it used to mean the default, one cent); unset is
// the default; a tolerance that is not a number of 0 or more is a load error.
func TestRules_Tolerance(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"total":{"type":"number"},"lines":{"type":"array","items":{"type":"object","properties":{"q":{"type":"number"},"p":{"type":"number"},"a":{"type":"number"}}}}}}`)
	rules := func(tol *float64) contract.Rules {
		return contract.Rules{
			Products: []contract.ProductRule{{Items: "/lines", Result: "a", Factors: []string{"q", "p"}, Tolerance: tol}},
			Sums:     []contract.SumRule{{Items: "/lines", Field: "a", Total: "/total", Tolerance: tol}},
		}
	}
	offByACent := `{"lines":[{"q":3,"p":0.1,"a":0.31},{"q":1,"p":0.2,"a":0.2}],"total":0.52}`
	exact := `{"lines":[{"q":3,"p":0.1,"a":0.3},{"q":1,"p":0.2,"a":0.2}],"total":0.5}` // 3*0.1 is 0.30000000000000004

	checkCase(t, mustValidator(t, schema, rules(nil)), offByACent, nil, "")
	checkCase(t, mustValidator(t, schema, rules(nil)), exact, nil, "")
	zero := mustValidator(t, schema, rules(ptr(0.0)))
	checkCase(t, zero, exact, nil, "")
	checkCase(t, zero, offByACent, []v{{"product", "/lines/0/a"}, {"sum", "/total"}}, "(tolerance 0)")

	// Off by exactly the tolerance is within it, at every magnitude float64
	// holds cents for (100000000000.01 - 100000000000 is 0.0100021362...).
	big := mustValidator(t, schema, rules(nil))
	checkCase(t, big, `{"lines":[{"q":1,"p":100000000000,"a":100000000000.01}],"total":100000000000.02}`, nil, "")
	checkCase(t, big, `{"lines":[{"q":1,"p":100000000000,"a":100000000000.02}],"total":100000000000}`,
		[]v{{"product", "/lines/0/a"}, {"sum", "/total"}}, "")

	for _, bad := range []float64{-0.01, math.NaN(), math.Inf(1)} {
		_, err := contract.NewValidator(schema, "", rules(ptr(bad)))
		if err == nil || !strings.Contains(err.Error(), "products[0].tolerance: ") || !strings.Contains(err.Error(), "sums[0].tolerance: ") {
			t.Fatalf("tolerance %v: %v", bad, err)
		}
	}
	_, err := contract.NewValidator(schema, "", contract.Rules{Ranges: map[string]contract.Range{"/total": {Min: ptr(math.NaN())}}})
	if err == nil || !strings.Contains(err.Error(), "ranges[/total]: min and max must be numbers") {
		t.Fatalf("NaN bound: %v", err)
	}
}
