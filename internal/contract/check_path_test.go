package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// CheckPath resolves a pointer to one value against the output schema as
// rule paths are checked at load: a misspelt property, a step into a value of
// another type, a key no_extra_keys forbids, a wildcard and a value of a
// type the caller cannot judge are refused, naming the path; a declared one
// and one the schema cannot judge are accepted.
func TestCheckPathResolvesAgainstTheSchema(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{
		"category":{"type":"string"},
		"lines":{"type":"array","items":{"$ref":"#/$defs/line"}},
		"meta":{"type":"object","additionalProperties":true}},
		"$defs":{"line":{"type":"object","properties":{"amount":{"type":"number"}}}}}`)
	val, err := contract.NewValidator(schema, "", contract.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/category", "/lines", "/lines/0/amount", "/meta/anything"} {
		if err := val.CheckPath(p); err != nil {
			t.Errorf("CheckPath(%s) = %v, want nil", p, err)
		}
	}
	if err := val.CheckPath("/lines", "array"); err != nil {
		t.Errorf("CheckPath(/lines, array) = %v", err)
	}
	for p, want := range map[string]string{
		"/categroy":          `path "/categroy": property "categroy" is not declared in the output schema at $ (declared: category, lines, meta)`,
		"/lines/0/amout":     `property "amout" is not declared in the output schema at /lines/0`,
		"/category/0":        `path "/category/0": /category is a string in the output schema, so it has no property "0"`,
		"/lines/*/amount":    `"*" is not allowed here`,
		"category":           `must be a JSON pointer starting with "/"`,
		"":                   `names the whole output`,
		"/lines/0/amount/~x": `"~x" is not an escape`,
	} {
		err := val.CheckPath(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckPath(%q) = %v, want an error saying %q", p, err, want)
		}
	}
	if err := val.CheckPath("/category", "array"); err == nil || !strings.Contains(err.Error(), `path "/category" is a string in the output schema; this needs an array`) {
		t.Errorf("CheckPath(/category, array) = %v", err)
	}

	strict, err := contract.NewValidator(schema, "", contract.Rules{NoExtraKeys: new(true)})
	if err != nil {
		t.Fatal(err)
	}
	if err := strict.CheckPath("/category"); err != nil {
		t.Errorf("no_extra_keys, declared key: %v", err)
	}
	open, err := contract.NewValidator([]byte(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`), "",
		contract.Rules{NoExtraKeys: new(true)})
	if err != nil {
		t.Fatal(err)
	}
	if err := open.CheckPath("/b"); err == nil || !strings.Contains(err.Error(), `no_extra_keys rejects every output with the top-level key "b"`) {
		t.Errorf("no_extra_keys, undeclared key the schema admits: %v", err)
	}
}
