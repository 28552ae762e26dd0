package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// An output with a number PostgreSQL's numeric cannot hold (1e400000) cannot
// be stored as a job's result (jsonb): it is refused as invalid output
// (json.unstorable, the provider's fault, failed over) instead of winning and
// then failing the win's write.
func TestValidateRefusesANumberTheDatabaseCannotHold(t *testing.T) {
	val := mustValidator(t, []byte(`{"type":"object","properties":{"x":{"type":"number"}}}`), contract.Rules{})
	doc, vs := val.Validate(`{"x": 1e400000}`)
	if doc != nil || len(vs) != 1 || vs[0].Rule != "json.unstorable" || !strings.Contains(vs[0].Message, "cannot be stored") {
		t.Fatalf("doc %s, violations %+v: want one json.unstorable violation", doc, vs)
	}
	if doc, vs := val.Validate(`{"x": 1e300}`); doc == nil || len(vs) != 0 {
		t.Fatalf("a number the database holds: doc %s, violations %+v", doc, vs)
	}
}

// A number within numeric's range that PostgreSQL writes out in full
// (1e131000: a 1 and 131000 zeros) on every read of the result is refused
// the same way, json.unstorable: a provider answering with thousands of them
// would make the win's write fail for want of memory and every read of the
// job too. So are numbers that grow by more than jsontext.MaxTextGrowth
// together; a float64's extremes pass.
func TestValidateRefusesANumberWrittenOutTooLong(t *testing.T) {
	val := mustValidator(t, []byte(`{"type":"object","properties":{"x":{}}}`), contract.Rules{})
	many := strings.TrimSuffix(strings.Repeat("1e999,", 1054), ",")
	for _, out := range []string{`{"x": 1e131000}`, `{"x": [` + many + `]}`, `{"x": -1e-1006}`} {
		doc, vs := val.Validate(out)
		if doc != nil || len(vs) != 1 || vs[0].Rule != "json.unstorable" || !strings.Contains(vs[0].Message, "cannot be stored") ||
			!strings.Contains(vs[0].Message, "written out") {
			t.Fatalf("output %.30s…: doc %.30s, violations %+v: want one json.unstorable violation saying how long it is written out", out, doc, vs)
		}
	}
	for _, out := range []string{`{"x": 1e308}`, `{"x": [5e-324, -1.7976931348623157e308, 2.2250738585072014e-308]}`} {
		if doc, vs := val.Validate(out); doc == nil || len(vs) != 0 {
			t.Fatalf("output %s: doc %s, violations %+v: want it valid", out, doc, vs)
		}
	}
}
