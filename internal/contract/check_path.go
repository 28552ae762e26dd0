package contract

import (
	"errors"
	"fmt"
)

// CheckPath checks a JSON pointer (RFC 6901) that names one value of an
// output — such as a conformance case's expectation — against the output
// schema and rules, as NewValidator checks its rule paths: each segment must
// name a property the schema declares (beside a $ref and in allOf members
// too, or in a branch of anyOf, oneOf or if/then/else, the rest then checked
// within the variants that declare it) or an index of an array, and, with
// no_extra_keys, the first a property declared in the top-level "properties"
// (or in such a branch; see extraKeys). Where the schema cannot tell
// (additionalProperties, patternProperties, no "type") it accepts. kinds, when given, are the types of value the caller can judge
// there ("array", "string", "number", ...). A "*" segment is refused: the
// pointer names one value. The error says what is wrong and where.
func (v *Validator) CheckPath(p string, kinds ...string) error {
	if p == "" || p == "$" {
		return errors.New(`the path names the whole output; name one value, like /category or /line_items/0/amount`)
	}
	ptr, err := parsePointer(p)
	if err != nil {
		return err
	}
	if ptr.wild {
		return fmt.Errorf(`path %q: "*" is not allowed here; name one value, with an index from 0 for an array element (like /line_items/0/amount)`, p)
	}
	end, err := v.schema.declared(ptr.segs)
	if err != nil {
		return fmt.Errorf("path %q: %w", p, err)
	}
	if v.noExtraKeys && len(v.declared) > 0 && !v.declared[ptr.segs[0]] {
		return fmt.Errorf("path %q: no_extra_keys rejects every output with the top-level key %q (the output schema does not declare it in \"properties\")", p, ptr.segs[0])
	}
	if len(kinds) > 0 && !allows(end, kinds...) {
		return fmt.Errorf("path %q is %s in the output schema; this needs %s", p, typeWords(end), kindWords(kinds))
	}
	return nil
}
