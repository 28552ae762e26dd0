package contract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// A rule's value of a type the output schema forbids where the rule looks
// loaded, and then no answer could pass: YAML reads `/currency: [840, 978]`
// as numbers, the schema says /currency is a string, and every answer was
// refused with "enum". enumTypeProblems and equalTypeProblem find these when
// the rules load.

// jsonKinds are the JSON types a value can have, as "type" names them
// ("integer" is a "number").
var jsonKinds = []string{"null", "boolean", "object", "array", "number", "string"}

// valueKind is the JSON type of a decoded value (see normalize).
func valueKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case json.Number:
		return "number"
	case string:
		return "string"
	}
	return ""
}

// enumTypeProblems says which of an enum's values (normalized) no answer
// could hold at path p, where the schemas end apply; nil when all can or the
// schema does not say.
func enumTypeProblems(p string, end []*jsonschema.Schema, values []any) []error {
	var out []error
	for _, a := range values {
		k := valueKind(a)
		if k == "" || allows(end, k) {
			continue
		}
		b, _ := json.Marshal(a)
		fix := "list values of that type, or change the schema"
		switch {
		case k == "number" && allows(end, "string"):
			fix = fmt.Sprintf("quote it, as YAML reads a bare number as a number: %s", strconv.Quote(string(b)))
		case k == "string" && allows(end, "number") && json.Valid([]byte(a.(string))) && valueKindOfJSON(a.(string)) == "number":
			fix = fmt.Sprintf("write it without quotes: %s", a.(string))
		case k == "boolean" && allows(end, "string"), k == "null" && allows(end, "string"):
			fix = fmt.Sprintf("quote it, as YAML reads a bare %s as a %s: %s", b, k, strconv.Quote(string(b)))
		}
		out = append(out, fmt.Errorf("the value %s (%s) can never be at %q, which is %s in the output schema: an answer that passes the schema never has it, and an enum of such values refuses every answer; %s",
			b, k, p, typeWords(end), fix))
	}
	return out
}

// valueKindOfJSON is the JSON type of the JSON text s.
func valueKindOfJSON(s string) string {
	v, err := ParseJSON([]byte(s))
	if err != nil {
		return ""
	}
	return valueKind(v)
}

// kindsAllowed lists the JSON types the schemas allow together (nil when
// they do not say).
func kindsAllowed(ss []*jsonschema.Schema) []string {
	said := false
	var out []string
	for _, k := range jsonKinds {
		if allows(ss, k) {
			out = append(out, k)
		}
	}
	for _, s := range ss {
		said = said || len(s.Types) > 0
	}
	if !said {
		return nil
	}
	return out
}

// equalTypeProblem says why an equal rule's two paths could never hold equal
// values (the schema types them apart), or nil.
func equalTypeProblem(left, right string, l, r []*jsonschema.Schema) error {
	lk, rk := kindsAllowed(l), kindsAllowed(r)
	if lk == nil || rk == nil || slices.ContainsFunc(lk, func(k string) bool { return slices.Contains(rk, k) }) {
		return nil
	}
	return fmt.Errorf("%q is %s and %q is %s in the output schema: no value could be both, so this rule would refuse every answer; pair paths of the same type",
		left, typeWords(l), right, typeWords(r))
}
