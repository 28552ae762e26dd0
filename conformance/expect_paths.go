package conformance

import (
	"fmt"
	"strings"

	"github.com/routerhq/router/internal/prompt"
)

// checkPaths resolves every pointer of the expectations against prompt p's
// output schema and rules (contract.Validator.CheckPath), as the prompt's own
// rule paths are checked when it loads: each must name a value the schema
// declares, length an array and pattern a string. Then it judges the values
// of equal and one_of (vc, see valueCheck): an equal value, or every value of
// a one_of, that no reply passing the schema and the rules can hold is
// refused. A misspelt pointer or an impossible value would fail the replies
// of every provider: that is the suite's fault, found before anything runs
// or is recorded. Each problem names the expectation, the pointer and the
// value, and says how to fix it.
func (e *Expect) checkPaths(p *prompt.Prompt, vc *valueCheck) []string {
	v := p.Validator()
	if v == nil {
		return nil
	}
	schema := p.OutputSchemaFile
	if schema == "" {
		schema = "its output_schema"
	}
	var problems []string
	check := func(kind, ptr string, kinds ...string) bool {
		if err := v.CheckPath(ptr, kinds...); err != nil {
			problems = append(problems, fmt.Sprintf("%s[%s]: %v; correct the pointer to name a value of %s's output schema (%s)",
				kind, ptr, err, p.ID(), schema))
			return false
		}
		return true
	}
	allow := fmt.Sprintf("%s's output schema (%s) and rules allow there", p.ID(), schema)
	for _, ptr := range sortedKeys(e.Equal) {
		if !check("equal", ptr) || vc == nil {
			continue
		}
		want := e.Equal[ptr]
		if why := vc.why(ptr, want); why != "" {
			problems = append(problems, fmt.Sprintf("equal[%s]: %s can never be there in a reply that passes the schema and the rules (%s), so every reply would fail this case; write a value %s%s",
				ptr, show(want), why, allow, vc.hint(ptr, want)))
		}
	}
	for _, ptr := range sortedKeys(e.OneOf) {
		if !check("one_of", ptr) || vc == nil || len(e.OneOf[ptr]) == 0 {
			continue
		}
		var values, whys, hints []string
		for _, want := range e.OneOf[ptr] {
			why := vc.why(ptr, want)
			if why == "" {
				whys = nil // one can be held: the expectation can be met
				break
			}
			values = append(values, show(want))
			whys = append(whys, show(want)+": "+why)
			if h := vc.hint(ptr, want); h != "" && len(hints) == 0 {
				hints = append(hints, h)
			}
		}
		if len(whys) > 0 {
			problems = append(problems, fmt.Sprintf("one_of[%s]: none of %s can be there in a reply that passes the schema and the rules (%s), so every reply would fail this case; list values %s%s",
				ptr, strings.Join(values, ", "), strings.Join(whys, "; "), allow, strings.Join(hints, "")))
		}
	}
	for _, ptr := range sortedKeys(e.Length) {
		check("length", ptr, "array")
	}
	for _, ptr := range sortedKeys(e.Pattern) {
		check("pattern", ptr, "string")
	}
	return problems
}
