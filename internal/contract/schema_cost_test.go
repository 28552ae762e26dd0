package contract_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// chainSchema is a caller's schema of levels "$defs", each applying the next
// twice, the last being inner: 2^levels applications of it to every value.
func chainSchema(levels int, inner string) string {
	var defs []string
	for i := range levels {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":%s`, levels, inner))
	return `{"$ref":"#/$defs/d0","$defs":{` + strings.Join(defs, ",") + `}}`
}

// A caller's response_format.json_schema whose $defs each apply the next
// twice compiles in microseconds and is 2.6 KB for 40 levels, but validating
// any answer against it takes 2^40 steps (18 levels took 0.7 s; with false
// innermost, 7.2 GB). It is refused when compiled, naming where and how to
// fix it.
func TestRequestSchemaRefusesDefsAppliedTwicePerLevel(t *testing.T) {
	for _, schema := range []string{chainSchema(40, `{"type":"object"}`), chainSchema(18, `false`), chainSchema(14, `true`)} {
		_, err := contract.CompileRequestSchema([]byte(schema), "response_format.json_schema")
		if err == nil {
			t.Fatalf("%d bytes: compiled; want it refused", len(schema))
		}
		for _, want := range []string{"response_format.json_schema", "more than 10000 of its subschemas", "the answer itself", "#/$defs/d",
			"fewer nested $ref, allOf, anyOf and oneOf"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q: want %q in it", err, want)
			}
		}
	}
	// 11 levels apply about 6,000 subschemas (the innermost 2048 times):
	// within the bound.
	if _, err := contract.CompileRequestSchema([]byte(chainSchema(11, `true`)), "response_format.json_schema"); err != nil {
		t.Fatalf("11 levels: %v", err)
	}
	// A prompt's schema is the router's own: not bounded.
	if _, err := contract.CompileSchema([]byte(chainSchema(40, `true`)), ""); err != nil {
		t.Fatalf("a prompt's schema: %v", err)
	}
}

// Recursion that applies a definition twice per level of the answer is as
// costly, for an answer nested as deep ({"a":{"a":…}} 40 levels, which any
// model writes on request), and is refused too, naming a place in the answer.
func TestRequestSchemaRefusesRecursionThatMultiplies(t *testing.T) {
	for name, schema := range map[string]string{
		"allOf twice":                  `{"$ref":"#/$defs/n","$defs":{"n":{"allOf":[{"$ref":"#/$defs/m"},{"$ref":"#/$defs/m"}]},"m":{"properties":{"a":{"$ref":"#/$defs/n"}}}}}`,
		"two branches to the same key": `{"$defs":{"n":{"anyOf":[{"properties":{"a":{"$ref":"#/$defs/n"}}},{"properties":{"a":{"$ref":"#/$defs/n"}}}]}},"$ref":"#/$defs/n"}`,
		"items and contains":           `{"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"},"contains":{"$ref":"#/$defs/n"}}},"$ref":"#/$defs/n"}`,
		"pattern and named":            `{"$defs":{"n":{"properties":{"k":{"$ref":"#/$defs/n"}},"patternProperties":{"^k":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
	} {
		_, err := contract.CompileRequestSchema([]byte(schema), "response_format.json_schema")
		if err == nil || !strings.Contains(err.Error(), "more than 10000 of its subschemas") || !strings.Contains(err.Error(), "the answer's /") {
			t.Errorf("%s: %v, want it refused naming a place in the answer", name, err)
		}
	}
}

// A $dynamicRef may apply, at validation, a subschema nothing else refers to
// (here "evil", found through the anchor both share): the check follows it.
// The library keeps that list unexported; this test fails if a new version
// of it moves the list out of the check's reach.
func TestRequestSchemaCostFollowsDynamicRefs(t *testing.T) {
	dynamic := func(levels int) string {
		chain := strings.TrimSuffix(strings.TrimPrefix(chainSchema(levels, "false"), `{"$ref":"#/$defs/d0","$defs":{`), "}}")
		return `{"$ref":"list","$defs":{` +
			`"evil":{"$id":"evil","$dynamicAnchor":"x","$ref":"#/$defs/d0","$defs":{` + chain + `}},` +
			`"list":{"$id":"list","$dynamicAnchor":"x","type":"object","properties":{"next":{"$dynamicRef":"#x"}}}}}`
	}
	// Validation applies "evil" (whose innermost false fails every value)
	// to "next", though only the anchor leads there.
	s, err := contract.CompileRequestSchema([]byte(dynamic(3)), "response_format.json_schema")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := contract.ParseJSON([]byte(`{"next":{}}`))
	if vs := s.Check(doc); len(vs) == 0 {
		t.Fatal("validation did not apply the anchor's other subschema: the test no longer shows the path")
	}
	_, err = contract.CompileRequestSchema([]byte(dynamic(40)), "response_format.json_schema")
	if err == nil || !strings.Contains(err.Error(), "more than 10000 of its subschemas") || !strings.Contains(err.Error(), "/next") {
		t.Fatalf("%v: want it refused at the answer's /next", err)
	}
}

// Ordinary schemas compile as a caller's: the shipped prompts' schemas,
// OpenAI's structured-output examples (a few $defs, a recursive UI tree, a
// linked list), a JSON value, an expression tree, definitions used under many
// properties, a union of many variants.
func TestRequestSchemaCostKeepsOrdinarySchemas(t *testing.T) {
	schemas := map[string]string{
		"math steps": `{"type":"object","properties":{"steps":{"type":"array","items":{"$ref":"#/$defs/step"}},"final_answer":{"type":"string"}},` +
			`"$defs":{"step":{"type":"object","properties":{"explanation":{"type":"string"},"output":{"type":"string"}},"required":["explanation","output"],"additionalProperties":false}},` +
			`"required":["steps","final_answer"],"additionalProperties":false}`,
		"ui tree": `{"type":"object","properties":{"type":{"type":"string","enum":["div","button","header","section","field","form"]},"label":{"type":"string"},` +
			`"children":{"type":"array","items":{"$ref":"#"}},"attributes":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"value":{"type":"string"}},` +
			`"required":["name","value"],"additionalProperties":false}}},"required":["type","label","children","attributes"],"additionalProperties":false}`,
		"linked list": `{"type":"object","properties":{"linked_list":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"value":{"type":"number"},` +
			`"next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},"required":["value","next"],"additionalProperties":false}},"required":["linked_list"],"additionalProperties":false}`,
		"json value": `{"$defs":{"v":{"anyOf":[{"type":["string","number","boolean","null"]},{"type":"array","items":{"$ref":"#/$defs/v"}},` +
			`{"type":"object","additionalProperties":{"$ref":"#/$defs/v"}}]}},"$ref":"#/$defs/v"}`,
		"expression": `{"$defs":{"expr":{"anyOf":[{"type":"number"},{"$ref":"#/$defs/op"}]},"op":{"type":"object","properties":{"op":{"enum":["+","-","*","/"]},` +
			`"left":{"$ref":"#/$defs/expr"},"right":{"$ref":"#/$defs/expr"},"args":{"type":"array","prefixItems":[{"$ref":"#/$defs/expr"},{"$ref":"#/$defs/expr"}],` +
			`"items":{"$ref":"#/$defs/expr"}}},"required":["op","left","right"]}},"$ref":"#/$defs/expr"}`,
		"mutual recursion": `{"$defs":{"a":{"type":"object","properties":{"b":{"$ref":"#/$defs/b"}},"patternProperties":{"^x-":{"$ref":"#/$defs/b"}}},` +
			`"b":{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"propertyNames":{"pattern":"^[a-z-]+$"},"unevaluatedProperties":false}},"$ref":"#/$defs/a"}`,
	}
	// Definitions used under many properties, three levels deep.
	var people, addresses []string
	for i := range 30 {
		people = append(people, fmt.Sprintf(`"p%d":{"$ref":"#/$defs/person"}`, i))
	}
	for i := range 10 {
		addresses = append(addresses, fmt.Sprintf(`"a%d":{"$ref":"#/$defs/address"}`, i))
	}
	schemas["reused definitions"] = `{"type":"object","properties":{` + strings.Join(people, ",") + `},"$defs":{` +
		`"person":{"type":"object","properties":{"name":{"type":"string"},` + strings.Join(addresses, ",") + `}},` +
		`"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"},"country":{"$ref":"#/$defs/country"}}},` +
		`"country":{"enum":["DE","FR","US"]}}}`
	// A union of 60 variants, each a base and its own members.
	var variants []string
	for i := range 60 {
		variants = append(variants, fmt.Sprintf(`{"allOf":[{"$ref":"#/$defs/base"},{"properties":{"kind":{"const":"k%d"},"v%d":{"type":"string"}}}]}`, i, i))
	}
	schemas["union"] = `{"type":"object","properties":{"events":{"type":"array","items":{"oneOf":[` + strings.Join(variants, ",") + `]}}},` +
		`"$defs":{"base":{"type":"object","properties":{"id":{"type":"string"},"at":{"type":"string","format":"date-time"}},"required":["id"]}}}`
	files, err := filepath.Glob("../../prompts/*/*.schema.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("the shipped prompts' schemas: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		schemas[f] = string(b)
	}
	for name, schema := range schemas {
		if _, err := contract.CompileRequestSchema([]byte(schema), "response_format.json_schema"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The check has a budget of its own: a schema that would take it more than
// about a million steps (here 1,500 patterns tried against 1,500 names at
// each of the places they lead to) is refused as too complex to check, and
// a large ordinary one (1,000 properties of objects) is well within it.
func TestRequestSchemaCostCheckIsBounded(t *testing.T) {
	var props, patterns []string
	for i := range 1500 {
		props = append(props, fmt.Sprintf(`"p%d":{"$ref":"#"}`, i))
		patterns = append(patterns, fmt.Sprintf(`"^q%d$":{"type":"string"}`, i))
	}
	schema := `{"type":"object","properties":{` + strings.Join(props, ",") + `},"patternProperties":{` + strings.Join(patterns, ",") + `}}`
	_, err := contract.CompileRequestSchema([]byte(schema), "response_format.json_schema")
	if err == nil || !strings.Contains(err.Error(), "too complex to check") {
		t.Fatalf("%v: want it refused as too complex to check", err)
	}
	props = props[:0]
	for i := range 1000 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"$ref":"#/$defs/c"}}}`, i))
	}
	schema = `{"type":"object","properties":{` + strings.Join(props, ",") + `},"$defs":{"c":{"type":"array","items":{"type":"number"}}}}`
	if _, err := contract.CompileRequestSchema([]byte(schema), "response_format.json_schema"); err != nil {
		t.Fatalf("1,000 properties: %v", err)
	}
}
