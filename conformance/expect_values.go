package conformance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/prompt"
)

// valueCheck tells whether a value of an expectation (equal, one_of) can be at
// its pointer in a reply that passes the prompt's output schema and rules. A
// value no such reply can hold (the text "yes" where the schema wants a
// boolean, "Billing" where the rules' enum has "billing") fails every
// provider's every reply, as a misspelt pointer does: a fault of the suite,
// refused before anything runs or is recorded, so a typo cannot withdraw
// every provider's pass.
//
// It refuses only what is certain. The value is validated against the
// schemas that surely apply at the pointer (contract.Schema.CheckValueAt, on
// the schema the prompt compiled at load) — "properties", "items" and
// "prefixItems" along the way, with "$ref" and "allOf" — never against an
// anyOf/oneOf branch or if/then/else, which need not apply; a schema it cannot
// follow there, or one using $dynamicRef or $recursiveRef (whose meaning
// depends on where validation started), is not judged. The rules are the
// prompt's enums and ranges, judged on a reply that holds just the value.
type valueCheck struct {
	schema *contract.Schema    // the output schema the prompt compiled at load; nil: not judged
	rules  *contract.Validator // the prompt's enums and ranges alone; nil: none
}

// newValueCheck prepares the judgement for prompt p. A prompt without a
// validator (one not built by loading it) is not judged.
func newValueCheck(p *prompt.Prompt) *valueCheck {
	vc := &valueCheck{}
	v := p.Validator()
	if v == nil {
		return vc
	}
	// The schema replies are judged by, as compiled at load
	// (contract.Schema.CheckValueAt walks it).
	vc.schema = v.Schema()
	if len(p.Rules.Enums) > 0 || len(p.Rules.Ranges) > 0 {
		off := false
		rules, err := contract.NewValidatorFromSchema(v.Schema(), contract.Rules{NoExtraKeys: &off, Enums: p.Rules.Enums, Ranges: p.Rules.Ranges})
		if err == nil {
			vc.rules = rules
		}
	}
	return vc
}

// why says why no reply that passes the schema and the rules can hold value
// at ptr (a pointer CheckPath accepted), "" when one can or when it cannot
// tell.
func (vc *valueCheck) why(ptr string, value any) string {
	segs, err := splitPointer(ptr)
	if err != nil {
		return ""
	}
	// The value as a reply's value is decoded: numbers as json.Number.
	b, err := json.Marshal(value)
	if err != nil {
		return ""
	}
	v, err := contract.ParseJSON(b)
	if err != nil {
		return ""
	}
	var reasons []string
	arrays := make([]bool, len(segs))
	if vc.schema != nil {
		var failures []contract.ValueFailure
		failures, arrays = vc.schema.CheckValueAt(segs, v)
		for _, f := range failures {
			reasons = append(reasons, fmt.Sprintf("output schema at %s: %s", ptr+f.Location, f.Message))
		}
	}
	if vc.rules != nil {
		doc, at := probe(segs, arrays, v)
		for _, x := range vc.rules.CheckRules(doc) {
			if (x.Rule == "enum" || x.Rule == "range") && (x.Path == at || strings.HasPrefix(x.Path, at+"/")) {
				reasons = append(reasons, fmt.Sprintf("rule %s at %s: %s", x.Rule, x.Path, x.Message))
			}
		}
	}
	const shown = 3
	if len(reasons) > shown {
		reasons = append(reasons[:shown], fmt.Sprintf("%d more", len(reasons)-shown))
	}
	return strings.Join(reasons, "; ")
}

// probe is a reply that holds just value at segs, with the shape arrays says
// (an array where a segment surely indexes one, else an object), and the
// concrete path of the value in it.
func probe(segs []string, arrays []bool, value any) (doc any, at string) {
	doc = value
	for i := len(segs) - 1; i >= 0; i-- {
		if arrays[i] {
			idx, _ := strconv.Atoi(segs[i])
			arr := make([]any, idx+1)
			arr[idx] = doc
			doc = arr
		} else {
			doc = map[string]any{segs[i]: doc}
		}
	}
	for i, seg := range segs {
		if arrays[i] {
			idx, _ := strconv.Atoi(seg)
			seg = strconv.Itoa(idx)
		}
		at += "/" + strings.ReplaceAll(strings.ReplaceAll(seg, "~", "~0"), "/", "~1")
	}
	return doc, at
}

// yamlBooleanWords are the words YAML 1.1 read as booleans; YAML 1.2 (and
// so a suite) reads them as text.
var yamlBooleanWords = []string{"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"}

// hint says how to write what was probably meant, "" when it cannot guess:
// the text "yes" where a boolean can be.
func (vc *valueCheck) hint(ptr string, value any) string {
	s, ok := value.(string)
	if !ok {
		return ""
	}
	for _, w := range yamlBooleanWords {
		if s == w && (vc.why(ptr, true) == "" || vc.why(ptr, false) == "") {
			return fmt.Sprintf(" (a suite is YAML 1.2, which reads %s as text: write true or false, unquoted)", s)
		}
	}
	return ""
}
