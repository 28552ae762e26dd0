package contract

import (
	"errors"
	"fmt"
	"strings"
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
	if err := v.schema.looseIndexes(p, ptr.segs); err != nil {
		return err
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

// looseIndexes refuses a segment of pointer p (segs, unescaped) written as
// an index with a sign or a leading zero ("01", "+1": strconv.Atoi reads
// them) where the schema says an array is: RFC 6901 writes an index in
// decimal without either, so such a pointer names no element. Where the
// schema allows an object there too, or cannot tell, the segment may be a
// key, and is left to the rest of the check.
func (s *Schema) looseIndexes(p string, segs []string) error {
	for i, seg := range segs {
		canon, loose := looseIndex(seg)
		if !loose {
			continue
		}
		at, err := s.declared(segs[:i])
		if err != nil || !allows(at, "array") || allows(at, "object") {
			continue
		}
		raw := strings.Split(p[1:], "/") // one per segment; an index has no escape
		raw[i] = canon
		return fmt.Errorf("path %q: %q is not an array index: a JSON pointer (RFC 6901) writes one in decimal, without a sign or a leading zero; write /%s",
			p, seg, strings.Join(raw, "/"))
	}
	return nil
}
