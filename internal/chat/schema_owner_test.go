package chat

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A request's schemas (response_format's, and each strict tool's
// parameters) are compiled through its owner's part of the schema cache:
// kept for that owner, not for another, and not at all for no owner.
func TestNormalizeForCompilesSchemasForTheOwner(t *testing.T) {
	schema := `{"type":"object","properties":{"owner_test_field":{"type":"string"}},"required":["owner_test_field"],"additionalProperties":false}`
	params := `{"type":"object","properties":{"owner_test_id":{"type":"string"}},"required":["owner_test_id"],"additionalProperties":false}`
	body := `{"model":"m","messages":[{"role":"user","content":"Reply in JSON."}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":` + schema + `}},` +
		`"tools":[{"type":"function","function":{"name":"lookup","strict":true,"parameters":` + params + `}}]}`
	var req Request
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	if _, err := req.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, err := req.NormalizeFor("owner-acme"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ bytes, name string }{{schema, "response_format.json_schema"}, {params, "tools[0].function.parameters"}} {
		if !contract.SchemaCachedFor("owner-acme", []byte(c.bytes), c.name) {
			t.Errorf("%s: not kept for the owner whose request compiled it", c.name)
		}
		if contract.SchemaCachedFor("owner-globex", []byte(c.bytes), c.name) {
			t.Errorf("%s: kept for another owner", c.name)
		}
	}
}
