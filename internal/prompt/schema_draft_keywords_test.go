package prompt_test

import (
	"testing"
)

// checkKeywords refuses, in a prompt's schema, a key that is not a keyword
// but close to one that checks something (docs/prompts.md §3: "a typo is
// never silently ignored"). Its list of checking keywords is the union of
// every draft's, but the compiler reads each keyword only in the drafts that
// have it: in draft 2020-12 (a schema without $schema) "additionalItems" is
// not read at all (tuples end with "items": false beside "prefixItems"), and
// in draft-07 "dependentRequired", "dependentSchemas", "prefixItems" and
// "unevaluatedProperties" are not. Such a keyword — the usual way to write
// the same thing one draft earlier or later — is taken as one that checks,
// loads without a word, and checks nothing: every answer it was written to
// refuse wins. It should be refused at load like a misspelt keyword, saying
// which keyword of the schema's draft to write instead.
func TestKeywordOfAnotherDraftIsNotSilentlyIgnored(t *testing.T) {
	for _, c := range []struct{ name, schema, bad string }{
		{"additionalItems in 2020-12",
			`{"type":"object","required":["answer"],"properties":{"answer":{"type":"array",` +
				`"prefixItems":[{"type":"string"},{"type":"number"}],"additionalItems":false}}}`,
			`{"answer":["a",1,"injected",{"x":1}]}`},
		{"dependentRequired in draft-07",
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","required":["answer"],` +
				`"properties":{"answer":{"type":"string"},"amount":{"type":"number"},"currency":{"type":"string"}},` +
				`"dependentRequired":{"amount":["currency"]}}`,
			`{"answer":"x","amount":12}`},
		{"unevaluatedProperties in draft-07",
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","required":["answer"],` +
				`"properties":{"answer":{"type":"object","properties":{"a":{"type":"string"}},"unevaluatedProperties":false}}}`,
			`{"answer":{"a":"x","b":"not declared"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			set, _, err := loadOne(t, manifestWith("rules:\n  no_extra_keys: false\n"), map[string]string{"out.json": c.schema})
			if err != nil {
				t.Logf("refused at load: %v", err)
				return // refused at load, naming the keyword: fine
			}
			p, _ := set.Get("p", "")
			if out, vs := p.Validator().Validate(c.bad); len(vs) == 0 {
				t.Fatalf("the schema loaded, and %s wins (%s): the keyword checked nothing; want it refused at load as a keyword the schema's draft does not read", c.bad, out)
			}
		})
	}
}
