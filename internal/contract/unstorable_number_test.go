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
