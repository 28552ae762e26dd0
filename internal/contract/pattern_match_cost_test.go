package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A caller's schema (chat response_format json_schema) is bounded in what
// compiling it costs (MaxSchemaPatternSize: 250,000 instructions and runes
// in all) and in how many subschemas apply to one place of an answer
// (MaxSchemaApplications), but not in what matching its patterns costs.
// Go's regexp matches in time proportional to the answer's length times the
// threads its program keeps alive, up to its instructions: the pattern
// `^(?s:.{0,1000})(?s:.{0,1000})*$` (about 4,000 instructions, every one of
// them alive on ordinary text) matches 16 KB of "lorem ipsum" in about
// 0.8 s, and the 2.8 KB schema below, which applies it 60 times to one
// string through allOf, took 58 s of CPU on the reviewer's machine to judge
// a 16 KB answer — a valid one, which any model asked for a long text
// writes (about 4,000 tokens), so no cap on violations helps. Every
// attempt's answer is judged, and a 64 KB answer takes four times as long.
// A schema whose patterns can apply that much matching work to one string is
// to be refused when it is compiled, as one too costly to validate against.
func TestCallerSchemaPatternMatchingIsBounded(t *testing.T) {
	one := `{"pattern":"^(?s:.{0,1000})(?s:.{0,1000})*$"}`
	all := strings.TrimSuffix(strings.Repeat(one+",", 60), ",")
	schema := `{"type":"object","properties":{"s":{"type":"string","allOf":[` + all + `]}}}`
	off := false
	if _, err := contract.NewRequestValidator([]byte(schema), "response_format.json_schema", contract.Rules{NoExtraKeys: &off}); err == nil {
		t.Fatalf("a %d-byte caller schema applying a 4,000-instruction pattern 60 times to one string compiled: "+
			"judging a 16 KB answer against it costs about a minute of CPU; want it refused as too costly to validate against", len(schema))
	}
}
