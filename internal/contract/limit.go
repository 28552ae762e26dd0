package contract

import "fmt"

// MaxViolations is the most violations one check lists. The violations of an
// output are stored with its attempt and served in job results and webhook
// payloads, and an output of a few MiB can break a schema or a rule millions of
// times (every element of a long array of the wrong type), so beyond this many
// one final violation, rule RuleTruncated, says how many more there were.
const MaxViolations = 100

// RuleTruncated is the rule of the violation that ends a list cut at
// MaxViolations; its message says how many violations were left out.
const RuleTruncated = "truncated"

// exactSchemaViolations is how many schema failures are gathered before they
// are first sorted and cut (see schemaViolations): up to this many, the number
// left out is exact.
const exactSchemaViolations = 10_000

// truncated is the violation that ends a cut list: more were left out, exactly
// or, when exact is false, at most (repeats may be counted twice).
func truncated(more int, exact bool) Violation {
	msg := fmt.Sprintf("%d more violations not listed (only the first %d are kept)", more, MaxViolations)
	if !exact {
		msg = "up to " + msg
	}
	return Violation{Rule: RuleTruncated, Path: "$", Message: msg}
}

// ruleViolations gathers the business rules' violations in the order they are
// found: the first MaxViolations, and a count of the rest.
type ruleViolations struct {
	list []Violation
	more int
}

// skip reports whether the list is full, counting the violation the caller
// was about to add: a caller with a costly message checks it first.
func (r *ruleViolations) skip() bool {
	if len(r.list) < MaxViolations {
		return false
	}
	r.more++
	return true
}

func (r *ruleViolations) add(v Violation) {
	if !r.skip() {
		r.list = append(r.list, v)
	}
}

// result is the list, ended by a RuleTruncated violation if some were left out;
// nil when there are none.
func (r *ruleViolations) result() []Violation {
	if r.more > 0 {
		return append(r.list, truncated(r.more, true))
	}
	return r.list
}

// schemaViolations gathers schema failures, which the library reports in no
// stable order, and keeps the first MaxViolations in violation order (see
// lessViolation) without repeats. It holds at most exactSchemaViolations at a
// time: when that many have gathered they are sorted and cut, and from then
// on a failure that sorts after the last one kept is only counted. Until that
// first cut the number left out is exact; after it a failure repeated (the
// same rule, path and message reached through several anyOf branches) may be
// counted more than once.
type schemaViolations struct {
	buf     []Violation
	dropped int
	cut     bool      // buf has been cut once: the count is at most, not exact
	full    bool      // a cut kept MaxViolations: last bounds what can still be kept
	last    Violation // the last violation kept by the latest cut, when full
}

func (s *schemaViolations) add(v Violation) {
	if s.full && lessViolation(s.last, v) {
		s.dropped++ // after MaxViolations smaller ones: never listed
		return
	}
	s.buf = append(s.buf, v)
	if len(s.buf) >= exactSchemaViolations {
		s.compact()
		s.cut = true
	}
}

// compact sorts buf, removes repeats and cuts it to MaxViolations.
func (s *schemaViolations) compact() {
	sortViolations(s.buf)
	s.buf = dedupe(s.buf)
	if len(s.buf) > MaxViolations {
		s.dropped += len(s.buf) - MaxViolations
		clear(s.buf[MaxViolations:])
		s.buf = s.buf[:MaxViolations]
	}
	if len(s.buf) == MaxViolations {
		s.full, s.last = true, s.buf[MaxViolations-1]
	}
}

// result is the sorted list, ended by a RuleTruncated violation if some were
// left out; nil when there are none.
func (s *schemaViolations) result() []Violation {
	s.compact()
	if len(s.buf) == 0 {
		return nil
	}
	if s.dropped > 0 {
		return append(s.buf, truncated(s.dropped, !s.cut))
	}
	return s.buf
}
