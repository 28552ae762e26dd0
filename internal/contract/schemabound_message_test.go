package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A violated numeric bound is quoted as the schema writes it, not rounded to
// a float64 (schemabound_message.go): "must be >= 9.007199254740992e+15 but
// found 9007199254740992" contradicted itself.
func TestSchemaBoundViolationQuotesTheBoundAsWritten(t *testing.T) {
	for _, c := range []struct{ schema, out, message string }{
		{`{"type":"object","properties":{"n":{"minimum":9007199254740993}}}`, `{"n":9007199254740992}`, "must be >= 9007199254740993 but found 9007199254740992"},
		{`{"type":"object","properties":{"n":{"exclusiveMaximum":100.00000000000000001}}}`, `{"n":100.00000000000000001}`, "must be < 100.00000000000000001 but found 100.00000000000000001"},
		{`{"type":"object","properties":{"n":{"maximum":1e400}}}`, `{"n":1e401}`, "must be <= 1e400 but found 1e401"},
		{`{"type":"object","properties":{"n":{"exclusiveMinimum":-2.50E-9}}}`, `{"n":-1}`, "must be > -2.5e-9 but found -1"},
		{`{"type":"object","properties":{"n":{"maximum":0.000125}}}`, `{"n":1}`, "must be <= 0.000125 but found 1"},
		{`{"type":"object","properties":{"n":{"$ref":"#/$defs/d"}},"$defs":{"d":{"minimum":1.10}}}`, `{"n":1}`, "must be >= 1.1 but found 1"},
		{`{"type":"object","properties":{"n":{"minimum":0}}}`, `{"n":-0.5}`, "must be >= 0 but found -0.5"},
		{`{"type":"object","properties":{"n":{"maximum":100000000000000000000}}}`, `{"n":1e21}`, "must be <= 100000000000000000000 but found 1e21"},
		{`{"type":"object","properties":{"n":{"maximum":1000000000000000000000}}}`, `{"n":1e22}`, "must be <= 1e21 but found 1e22"},
		{`{"type":"object","properties":{"n":{"maximum":0.000001}}}`, `{"n":1}`, "must be <= 0.000001 but found 1"},
		{`{"type":"object","properties":{"n":{"maximum":1234.5e-10}}}`, `{"n":1}`, "must be <= 1.2345e-7 but found 1"},
	} {
		request, err := contract.NewRequestValidator([]byte(c.schema), "response_format.json_schema", contract.Rules{})
		if err != nil {
			t.Fatal(err)
		}
		prompt, err := contract.NewValidator([]byte(c.schema), "", contract.Rules{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []*contract.Validator{request, prompt} {
			_, vs := v.Validate(c.out)
			if len(vs) != 1 || vs[0].Message != c.message || !strings.HasPrefix(vs[0].Rule, "schema.") {
				t.Errorf("%s %s: %v, want one violation: %s", c.schema, c.out, vs, c.message)
			}
		}
	}
}
