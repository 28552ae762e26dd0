package contract

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxSchemaPatternWork bounds the matching a caller's schema asks of one
// string of an answer: the compiled instructions (regexpInsts) of every
// "pattern" that can apply to one value, each counted as many times as it
// applies there; and, on their own, those of every "patternProperties" name
// that applies to one object's member names. Go's regular expressions match
// in time linear in the text, but each character costs up to one step per
// instruction of the program (its live threads): `^(?s:.{0,1000})(?s:.{0,1000})*$`,
// about 4,000 instructions, takes about a second on 16 KB of ordinary text,
// and a 2.8 KB schema applying it 60 times to one string (through allOf)
// took about a minute of CPU to judge one 16 KB answer. At this bound a
// string's patterns cost at most about 0.1 ms a character on a small
// machine (1 to 2 s for 16 KB), and an answer at most about that times its
// length: each character is in one string, or in one member name (matched
// against propertyNames' patterns and patternProperties' names, each sum
// bounded).
// Ordinary patterns are far below it: an email, UUID or ISO date pattern is
// 15 to 300 instructions, an IPv6 address about 1,250, and a repetition
// counts each copy (`^.{1,255}$` is about 500). The compile's own bound,
// MaxSchemaPatternSize, counts each pattern once wherever it applies.
// Prompts' schemas are the router's own and are not bounded.
const MaxSchemaPatternWork = 5_000

// patternWork is what a subschema's patterns cost to match, per character,
// in instructions: its "pattern" against a string it applies to, and its
// "patternProperties" names against each member name of an object.
type patternWork struct {
	value, names int64
}

// patternWorks measures each node's patterns, once. They compiled, so they
// parse; the parse is linear in their length and nothing is compiled.
func (g *schemaGraph) patternWorks() []patternWork {
	out := make([]patternWork, len(g.nodes))
	for i, s := range g.nodes {
		if s.Pattern != nil {
			out[i].value = patternInsts(s.Pattern)
		}
		for re := range s.PatternProperties {
			out[i].names += patternInsts(re)
		}
	}
	return out
}

// patternInsts is regexpInsts of a compiled pattern.
func patternInsts(re *regexp.Regexp) int64 {
	p, err := parsePattern(re.String())
	if err != nil {
		return int64(len(re.String())) // it compiled, so it parses
	}
	return regexpInsts(p)
}

// tooMuchMatching returns an error when the patterns applying at a place
// where st applies (the steps of a JSON pointer, none for the answer itself)
// cost more than MaxSchemaPatternWork to match per character.
func (c *costCheck) tooMuchMatching(st costState, path func() []string) error {
	var value, names int64
	for _, e := range st {
		w := c.match[e.node]
		value += e.count * w.value
		names += e.count * w.names
	}
	if value <= MaxSchemaPatternWork && names <= MaxSchemaPatternWork {
		return nil
	}
	against, total, of := "one string", value, func(w patternWork) int64 { return w.value }
	if value <= MaxSchemaPatternWork {
		against, total, of = "each member name of one object", names, func(w patternWork) int64 { return w.names }
	}
	most := st[0]
	for _, e := range st {
		if e.count*of(c.match[e.node]) > most.count*of(c.match[most.node]) {
			most = e
		}
	}
	applied := ""
	if most.count > 1 {
		applied = ", applied " + times(most.count)
	}
	return fmt.Errorf("validating an answer against it matches its patterns against %s with %d compiled instructions in all (%s; the costliest, at %s, %d instructions%s), "+
		"more than the %d the router allows for a schema sent with a request: matching costs time in proportion to the text's length times those instructions; "+
		"apply fewer patterns to one value (allOf, anyOf, oneOf and $ref each apply theirs), use smaller repetition counts (x{0,1000} is 1,000 copies of x; "+
		`use maxLength for a length), or use "format"`,
		against, total, placeName(path()), schemaPointer(c.g.nodes[most.node].Location), of(c.match[most.node]), applied, MaxSchemaPatternWork)
}

// placeName names a place of an answer by the steps down to it.
func placeName(path []string) string {
	switch {
	case len(path) > 8:
		return fmt.Sprintf("the answer's %s… (%d levels down)", strings.Join(path[:8], ""), len(path))
	case len(path) > 0:
		return "the answer's " + strings.Join(path, "")
	}
	return "the answer itself"
}
