package conformance

import (
	"fmt"

	"github.com/routerhq/router/internal/prompt"
)

// checkPaths resolves every pointer of the expectations against prompt p's
// output schema and rules (contract.Validator.CheckPath), as the prompt's own
// rule paths are checked when it loads: each must name a value the schema
// declares, length an array and pattern a string. A misspelt pointer would
// fail the replies of every provider: that is the suite's fault, found
// before anything runs or is recorded. Each problem names the
// expectation and the pointer, and says how to fix it.
func (e *Expect) checkPaths(p *prompt.Prompt) []string {
	v := p.Validator()
	if v == nil {
		return nil
	}
	schema := p.OutputSchemaFile
	if schema == "" {
		schema = "its output_schema"
	}
	var problems []string
	check := func(kind, ptr string, kinds ...string) {
		if err := v.CheckPath(ptr, kinds...); err != nil {
			problems = append(problems, fmt.Sprintf("%s[%s]: %v; correct the pointer to name a value of %s's output schema (%s)",
				kind, ptr, err, p.ID(), schema))
		}
	}
	for _, ptr := range sortedKeys(e.Equal) {
		check("equal", ptr)
	}
	for _, ptr := range sortedKeys(e.OneOf) {
		check("one_of", ptr)
	}
	for _, ptr := range sortedKeys(e.Length) {
		check("length", ptr, "array")
	}
	for _, ptr := range sortedKeys(e.Pattern) {
		check("pattern", ptr, "string")
	}
	return problems
}
