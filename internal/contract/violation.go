package contract

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
)

// Violation is one reason an output (or input) was rejected.
type Violation struct {
	// Rule names what failed: "json.syntax", "json.fenced",
	// "json.duplicate_key", "json.unstorable", "schema.<keyword>"
	// (schema.required, schema.type, ...), "no_extra_keys", "enum", "range",
	// "equal", "product", "sum" or "custom:<name>"; and "truncated"
	// (RuleTruncated), the last of a list cut at MaxViolations.
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

// sortViolations orders violations by path, then rule, then message (see
// lessViolation), so that reports are deterministic even where the schema
// library walks maps.
func sortViolations(vs []Violation) {
	sort.SliceStable(vs, func(i, j int) bool { return lessViolation(vs[i], vs[j]) })
}

// lessViolation orders violations by path (see comparePaths), then rule, then
// message.
func lessViolation(a, b Violation) bool {
	if c := comparePaths(a.Path, b.Path); c != 0 {
		return c < 0
	}
	if a.Rule != b.Rule {
		return a.Rule < b.Rule
	}
	return a.Message < b.Message
}

// comparePaths orders violation paths: "$" first, then segment by segment, a
// path before the longer paths it begins. Segments that are all digits (array
// indexes) come by number, /items/2 before /items/10, and before other
// segments, which come in byte order. It returns -1, 0 or +1.
func comparePaths(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "$":
		return -1
	case b == "$":
		return 1
	}
	for {
		sa, ra, moreA := strings.Cut(a, "/")
		sb, rb, moreB := strings.Cut(b, "/")
		if sa != sb {
			return compareSegments(sa, sb)
		}
		switch {
		case !moreA && !moreB:
			return 0
		case !moreA:
			return -1
		case !moreB:
			return 1
		}
		a, b = ra, rb
	}
}

// compareSegments orders two different path segments: all-digit ones by
// number (shorter first, then by digits: "01" sorts after "9", deterministic
// either way), before any other, and the others in byte order.
func compareSegments(a, b string) int {
	da, db := allDigits(a), allDigits(b)
	switch {
	case da && db && len(a) != len(b):
		return cmp.Compare(len(a), len(b))
	case da != db:
		if da {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
