package contract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/prompt"
)

// loadExample returns the validator of a shipped example prompt.
func loadExample(tb testing.TB, name string) *contract.Validator {
	tb.Helper()
	set, err := prompt.LoadDir("../../prompts")
	if err != nil {
		tb.Fatalf("load example prompts: %v", err)
	}
	p, err := set.Get(name, "")
	if err != nil {
		tb.Fatal(err)
	}
	return p.Validator()
}

const triageOK = `{"category":"billing","priority":"high","summary":"Customer was charged twice for the March invoice and wants a refund.","needs_human":true}`

const invoiceOK = `{
  "invoice_number": "INV-2024-0042",
  "currency": "EUR",
  "issue_date": "2024-03-01",
  "due_date": "2024-03-31",
  "line_items": [
    {"description": "Consulting, March", "quantity": 12, "unit_price": 150.00, "amount": 1800.00},
    {"description": "Travel expenses", "quantity": 1, "unit_price": 312.40, "amount": 312.40},
    {"description": "Licence seats", "quantity": 3, "unit_price": 49.99, "amount": 149.97}
  ],
  "total": 2262.37
}`

// v is a short way to write an expected violation without its message.
type v struct{ rule, path string }

func pairs(vs []contract.Violation) []v {
	out := make([]v, len(vs))
	for i, x := range vs {
		out[i] = v{x.Rule, x.Path}
	}
	return out
}

func checkCase(t *testing.T, val *contract.Validator, output string, want []v, wantMsg string) {
	t.Helper()
	doc, vs := val.Validate(output)
	if fmt.Sprint(pairs(vs)) != fmt.Sprint(want) {
		t.Fatalf("violations:\n got %v\nwant %v\nfull: %v", pairs(vs), want, vs)
	}
	if len(want) == 0 {
		if doc == nil || !json.Valid(doc) {
			t.Fatalf("want a JSON doc on success, got %q", doc)
		}
	} else if doc != nil {
		t.Fatalf("want nil doc on failure, got %s", doc)
	}
	if wantMsg != "" {
		var all []string
		for _, x := range vs {
			all = append(all, x.Message)
		}
		if !strings.Contains(strings.Join(all, "\n"), wantMsg) {
			t.Fatalf("messages %q do not mention %q", all, wantMsg)
		}
	}
	for _, x := range vs {
		if x.Message == "" {
			t.Fatalf("violation without a message: %+v", x)
		}
	}
}

func TestValidate_Triage(t *testing.T) {
	val := loadExample(t, "triage")
	tests := []struct {
		name, output string
		want         []v
		msg          string
	}{
		{"valid", triageOK, nil, ""},
		{"valid with surrounding whitespace", "\n  " + triageOK + "\n\n", nil, ""},
		{"fenced json", "```json\n" + triageOK + "\n```", nil, ""},
		{"fenced bare", "```\n" + triageOK + "\n```\n", nil, ""},
		{"fenced other language is not unwrapped", "```python\n" + triageOK + "\n```", []v{{"json.syntax", "$"}}, "invalid JSON"},
		{"prose around JSON", "Sure! Here it is: " + triageOK, []v{{"json.syntax", "$"}}, "invalid JSON at byte 1"},
		{"not JSON", "I cannot help with that.", []v{{"json.syntax", "$"}}, "invalid JSON"},
		{"empty", "   ", []v{{"json.syntax", "$"}}, "empty output"},
		{"truncated", triageOK[:40], []v{{"json.syntax", "$"}}, "truncated JSON"},
		{"two values", triageOK + " {}", []v{{"json.syntax", "$"}}, "unexpected data after the JSON value"},
		{"hallucinated extra key", `{"category":"billing","priority":"high","summary":"Customer was charged twice.","needs_human":true,"extra":"x"}`,
			[]v{{"no_extra_keys", "/extra"}}, `key "extra" is not declared`},
		{"wrong enum in valid JSON", `{"category":"billing","priority":"critical","summary":"Customer was charged twice.","needs_human":true}`,
			[]v{{"enum", "/priority"}}, `"critical" is not one of ["low", "normal", "high", "urgent"]`},
		{"summary too short", `{"category":"billing","priority":"low","summary":"refund","needs_human":false}`,
			[]v{{"range", "/summary"}}, "length 6 is below the minimum 10"},
		{"every business failure is listed", `{"category":"sales","priority":"p1","summary":"x","needs_human":false,"b":1,"a":2}`,
			[]v{{"no_extra_keys", "/a"}, {"no_extra_keys", "/b"}, {"enum", "/category"}, {"enum", "/priority"}, {"range", "/summary"}}, ""},
		{"schema required and type, all listed", `{"category":7,"needs_human":"yes"}`,
			[]v{{"schema.type", "/category"}, {"schema.type", "/needs_human"}, {"schema.required", "/priority"}, {"schema.required", "/summary"}},
			"expected boolean, but got string"},
		{"schema failure suppresses business rules", `{"category":"nope","priority":"high","summary":"Customer was charged twice.","extra":1}`,
			[]v{{"schema.required", "/needs_human"}}, `required property "needs_human" is missing`},
		{"not an object", `["billing"]`, []v{{"schema.type", "$"}}, "expected object, but got array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkCase(t, val, tc.output, tc.want, tc.msg) })
	}
}

func TestValidate_Invoice(t *testing.T) {
	val := loadExample(t, "invoice")
	mod := func(from, to string) string {
		if !strings.Contains(invoiceOK, from) {
			t.Fatalf("fixture lacks %q", from)
		}
		return strings.Replace(invoiceOK, from, to, 1)
	}
	tests := []struct {
		name, output string
		want         []v
		msg          string
	}{
		{"valid", invoiceOK, nil, ""},
		{"line items do not add up", mod(`"total": 2262.37`, `"total": 2300.00`),
			[]v{{"sum", "/total"}}, "is 2300 but the sum of /line_items/*/amount over 3 items is 2262.37 (off by 37.63"},
		{"total within tolerance", mod(`"total": 2262.37`, `"total": 2262.375`), nil, ""},
		{"amount is not quantity times price", mod(`"amount": 312.40`, `"amount": 321.40`),
			[]v{{"product", "/line_items/1/amount"}, {"sum", "/total"}}, "amount is 321.4 but quantity * unit_price = 1 * 312.4 = 312.4"},
		{"due date before issue date", mod(`"due_date": "2024-03-31"`, `"due_date": "2024-02-15"`),
			[]v{{"custom:invoice.dates_ordered", "/due_date"}}, "due_date 2024-02-15 is before issue_date 2024-03-01"},
		{"currency not allowed", mod(`"EUR"`, `"XYZ"`), []v{{"enum", "/currency"}}, ""},
		{"negative quantity", mod(`"quantity": 3, "unit_price": 49.99, "amount": 149.97`, `"quantity": -3, "unit_price": 49.99, "amount": -149.97`),
			[]v{{"range", "/line_items/2/quantity"}, {"sum", "/total"}}, "value -3 is below the minimum 0"},
		{"no line items", `{"invoice_number":"1","currency":"USD","issue_date":"2024-01-01","due_date":"2024-01-02","line_items":[],"total":0}`,
			[]v{{"range", "/line_items"}}, "item count 0 is below the minimum 1"},
		{"bad date format", mod(`"issue_date": "2024-03-01"`, `"issue_date": "01/03/2024"`),
			[]v{{"schema.format", "/issue_date"}}, "is not valid 'date'"},
		{"nested schema failures with paths", mod(`"amount": 149.97}`, `"amount": "149.97", "note": "x"}`),
			[]v{{"schema.type", "/line_items/2/amount"}, {"schema.additionalProperties", "/line_items/2/note"}}, ""},
		{"extra top-level key", mod(`"total": 2262.37`, `"total": 2262.37, "tax": 0`), []v{{"no_extra_keys", "/tax"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkCase(t, val, tc.output, tc.want, tc.msg) })
	}
}

func TestValidate_DocIsCompactAndKeepsNumbers(t *testing.T) {
	val := loadExample(t, "invoice")
	doc, vs := val.Validate("```json\n" + invoiceOK + "\n```")
	if vs != nil {
		t.Fatal(vs)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, []byte(invoiceOK)); err != nil {
		t.Fatal(err)
	}
	if string(doc) != want.String() {
		t.Fatalf("doc is not the compact output:\n got %s\nwant %s", doc, want.String())
	}
	if !strings.Contains(string(doc), `"unit_price":150.00`) || !strings.HasPrefix(string(doc), `{"invoice_number":"INV-2024-0042",`) {
		t.Fatalf("doc must keep key order and number spelling: %s", doc)
	}
}

func schemaFor(props ...string) []byte {
	return []byte(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)
}

func mustValidator(t *testing.T, schema []byte, rules contract.Rules) *contract.Validator {
	t.Helper()
	val, err := contract.NewValidator(schema, "", rules)
	if err != nil {
		t.Fatal(err)
	}
	return val
}

func ptr[T any](x T) *T { return &x }

func TestRules_Options(t *testing.T) {
	schema := schemaFor(`"a":{"type":"number"}`)
	t.Run("allow_fenced false rejects fences", func(t *testing.T) {
		val := mustValidator(t, schema, contract.Rules{AllowFenced: ptr(false)})
		checkCase(t, val, "```json\n{\"a\":1}\n```", []v{{"json.fenced", "$"}}, "allow_fenced: false")
		checkCase(t, val, `{"a":1}`, nil, "")
	})
	t.Run("no_extra_keys false allows extra keys", func(t *testing.T) {
		val := mustValidator(t, schema, contract.Rules{NoExtraKeys: ptr(false)})
		checkCase(t, val, `{"a":1,"b":2}`, nil, "")
	})
	t.Run("no_extra_keys defaults to true", func(t *testing.T) {
		val := mustValidator(t, schema, contract.Rules{})
		checkCase(t, val, `{"a":1,"b":2}`, []v{{"no_extra_keys", "/b"}}, "")
	})
}

func TestRules_Equal(t *testing.T) {
	val := mustValidator(t, schemaFor(`"subtotal":{"type":"number"}`, `"total":{"type":"number"}`, `"currency":{}`, `"billing":{"type":"object","properties":{"currency":{}}}`),
		contract.Rules{Equal: []contract.EqualRule{{Left: "/total", Right: "/subtotal"}, {Left: "/billing/currency", Right: "/currency"}}})
	checkCase(t, val, `{"subtotal":10,"total":10.0,"currency":"EUR","billing":{"currency":"EUR"}}`, nil, "")
	checkCase(t, val, `{"subtotal":10,"total":12,"currency":"EUR","billing":{"currency":"USD"}}`,
		[]v{{"equal", "/total"}, {"equal", "/billing/currency"}}, "must equal /subtotal: got 12, /subtotal is 10")
	checkCase(t, val, `{"total":12}`, nil, "") // absent side: presence is the schema's job
}

func TestRules_SumWithMultiply(t *testing.T) {
	val := mustValidator(t, []byte(`{"type":"object","properties":{"total":{"type":"number"},"items":{"type":"array","items":{"type":"object","properties":{"qty":{},"price":{}}}}}}`),
		contract.Rules{Sums: []contract.SumRule{{Items: "/items", Field: "qty", Multiply: "price", Total: "/total", Tolerance: ptr(0.5)}}})
	checkCase(t, val, `{"items":[{"qty":2,"price":1.5},{"qty":1,"price":7}],"total":10.4}`, nil, "")
	checkCase(t, val, `{"items":[{"qty":2,"price":1.5},{"qty":1,"price":7}],"total":11}`, []v{{"sum", "/total"}}, "sum of /items/*/qty * price over 2 items is 10")
	checkCase(t, val, `{"items":[{"qty":"two","price":1.5}],"total":3}`, []v{{"sum", "/items/0/qty"}}, "must be a number, got string")
}

func TestRules_RangeKindsAndEnumNumbers(t *testing.T) {
	val := mustValidator(t, schemaFor(`"n":{}`, `"s":{}`, `"list":{"type":"array"}`, `"level":{}`),
		contract.Rules{
			Ranges: map[string]contract.Range{"/n": {Min: ptr(1.0), Max: ptr(5.0)}, "/s": {Max: ptr(3.0)}, "/list": {Max: ptr(1.0)}, "/list/*": {Min: ptr(0.0)}},
			Enums:  map[string][]any{"/level": {1, 2, 3}}, // ints, as YAML decodes them
		})
	checkCase(t, val, `{"n":5,"s":"héé","list":[0],"level":2.0}`, nil, "")
	checkCase(t, val, `{"n":5.5,"s":"four","list":[-1,2],"level":4}`,
		[]v{{"enum", "/level"}, {"range", "/list"}, {"range", "/list/0"}, {"range", "/n"}, {"range", "/s"}}, "value 5.5 is above the maximum 5")
	checkCase(t, val, `{"n":true}`, []v{{"range", "/n"}}, "range applies to numbers, strings and arrays, got boolean")
}

// The registry is for init functions and refuses a name twice, so the test's
// rules are registered once per process: the test must pass again under
// go test -count=N.
var registerTestRules = sync.OnceFunc(func() {
	contract.Register("test.panics", func(doc any) []contract.Violation { panic("boom") })
	contract.Register("test.reports", func(doc any) []contract.Violation {
		return []contract.Violation{{Rule: "ignored", Message: "whole doc is wrong"}}
	})
})

func TestCustomRulePanicIsAViolation(t *testing.T) {
	registerTestRules()
	val := mustValidator(t, schemaFor(`"a":{}`), contract.Rules{Custom: []string{"test.reports", "test.panics"}})
	checkCase(t, val, `{"a":1}`, []v{{"custom:test.reports", "$"}, {"custom:test.panics", "$"}}, "rule panicked: boom")
}

func TestRegisterPanics(t *testing.T) {
	for name, fn := range map[string]func(){
		"duplicate": func() { contract.Register("invoice.dates_ordered", func(any) []contract.Violation { return nil }) },
		"empty":     func() { contract.Register("", func(any) []contract.Violation { return nil }) },
		"nil func":  func() { contract.Register("test.nil", nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("Register did not panic")
				}
			}()
			fn()
		})
	}
	if !strings.Contains(strings.Join(contract.Registered(), ","), "invoice.dates_ordered") {
		t.Fatalf("shipped rule not registered: %v", contract.Registered())
	}
}

func TestNewValidator_Errors(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"category":{},"total":{},"lines":{"type":"array","items":{"type":"object","properties":{"amount":{}},"additionalProperties":false}}}}`)
	tests := []struct {
		name   string
		schema []byte
		rules  contract.Rules
		want   []string
	}{
		{"unknown custom rule", schema, contract.Rules{Custom: []string{"nope"}}, []string{`custom[0]: no Go rule named "nope" is registered (registered: `, "invoice.dates_ordered"}},
		{"path without slash", schema, contract.Rules{Enums: map[string][]any{"category": {"a"}}}, []string{`enums[category]: path "category" must be a JSON pointer`}},
		{"undeclared property", schema, contract.Rules{Enums: map[string][]any{"/categry": {"a"}}}, []string{`enums[/categry]: path "/categry": property "categry" is not declared in the output schema at $ (declared: category, lines, total)`}},
		{"undeclared nested field", schema, contract.Rules{Sums: []contract.SumRule{{Items: "/lines", Field: "amout", Total: "/total"}}}, []string{`sums[0].field: property "amout" is not declared in the output schema at /lines/*`}},
		{"wildcard in equal", schema, contract.Rules{Equal: []contract.EqualRule{{Left: "/lines/*/amount", Right: "/total"}}}, []string{`equal[0].left: path "/lines/*/amount": "*" is not allowed here`}},
		{"wildcard on an object", schema, contract.Rules{Ranges: map[string]contract.Range{"/*": {Min: ptr(0.0)}}}, []string{`is an object in the output schema, not an array`}},
		{"empty range", schema, contract.Rules{Ranges: map[string]contract.Range{"/total": {}}}, []string{"ranges[/total]: set min, max or both"}},
		{"min above max", schema, contract.Rules{Ranges: map[string]contract.Range{"/total": {Min: ptr(2.0), Max: ptr(1.0)}}}, []string{"ranges[/total]: min 2 is greater than max 1"}},
		{"empty enum", schema, contract.Rules{Enums: map[string][]any{"/category": {}}}, []string{"enums[/category]: list at least one allowed value"}},
		{"product needs two factors", schema, contract.Rules{Products: []contract.ProductRule{{Items: "/lines", Result: "amount", Factors: []string{"amount"}}}}, []string{"products[0].factors: list at least two fields"}},
		{"sum without total", schema, contract.Rules{Sums: []contract.SumRule{{Items: "/lines", Field: "amount"}}}, []string{"sums[0].total: name the path of the total"}},
		{"no_extra_keys without properties", []byte(`{"type":"object"}`), contract.Rules{}, []string{"no_extra_keys: the output schema declares no top-level properties"}},
		{"several problems at once", schema, contract.Rules{Custom: []string{"x"}, Ranges: map[string]contract.Range{"/total": {}}}, []string{"custom[0]:", "ranges[/total]:"}},
		{"schema not JSON", []byte(`{"type":`), contract.Rules{}, []string{"is not valid JSON"}},
		{"schema not a valid schema", []byte(`{"type":"objekt"}`), contract.Rules{}, []string{"is not a valid JSON Schema", "/type"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			val, err := contract.NewValidator(tc.schema, "", tc.rules)
			if err == nil {
				t.Fatalf("want error, got validator %v", val)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestRulesDecodeJSON(t *testing.T) {
	var r contract.Rules
	if err := json.Unmarshal([]byte(`{"enums":{"/a":["x",1]},"ranges":{"/b":{"min":0}},"sums":[{"items":"/l","field":"f","total":"/t"}],"allow_fenced":false}`), &r); err != nil {
		t.Fatal(err)
	}
	if !r.NoExtraKeysEnabled() || r.AllowFencedEnabled() || *r.Ranges["/b"].Min != 0 || r.Sums[0].Total != "/t" || len(r.Enums["/a"]) != 2 {
		t.Fatalf("decoded %+v", r)
	}
}

func TestValidateConcurrent(t *testing.T) {
	val := loadExample(t, "invoice")
	bad := strings.Replace(invoiceOK, `"total": 2262.37`, `"total": 1`, 1)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				out, wantOK := invoiceOK, true
				if i%2 == 1 {
					out, wantOK = bad, false
				}
				if _, vs := val.Validate(out); (len(vs) == 0) != wantOK {
					t.Errorf("goroutine %d: violations %v", i, vs)
					return
				}
			}
		}()
	}
	wg.Wait()
}
