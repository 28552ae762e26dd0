package contract

import (
	"fmt"
	"sort"
)

// Violation is one reason an output (or input) was rejected.
type Violation struct {
	// Rule names what failed: "json.syntax", "json.fenced", "schema.<keyword>"
	// (schema.required, schema.type, ...), "no_extra_keys", "enum", "range",
	// "equal", "product", "sum" or "custom:<name>".
	Rule string `json:"rule"`
	// Path is a JSON pointer to the offending value (/line_items/2/amount), or "$"
	// for the whole document.
	Path string `json:"path"`
	// Message says what is wrong in words.
	Message string `json:"message"`
}

// String renders the violation as "rule at path: message".
func (v Violation) String() string {
	return fmt.Sprintf("%s at %s: %s", v.Rule, v.Path, v.Message)
}

// sortViolations orders violations by path, then rule, then message, so that
// reports are deterministic even where the schema library walks maps.
func sortViolations(vs []Violation) {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
}
