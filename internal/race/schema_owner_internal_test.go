package race

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// The race judges a stored chat job against its schemas compiled for the
// job's owner: response_format's when the spec is built, a strict tool's
// parameters when an answer calls it. Each is kept in that owner's part of
// the schema cache only, so another tenant cannot time its requests to
// learn that this job's schemas were sent.
func TestChatSpecCompilesSchemasForTheJobsOwner(t *testing.T) {
	schema := `{"type":"object","properties":{"race_owner_field":{"type":"string"}},"required":["race_owner_field"],"additionalProperties":false}`
	params := `{"type":"object","properties":{"race_owner_id":{"type":"string"}},"required":["race_owner_id"],"additionalProperties":false}`
	input := `{"messages":[{"role":"user","content":"Reply in JSON."}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":` + schema + `}},` +
		`"tools":[{"type":"function","function":{"name":"lookup","strict":true,"parameters":` + params + `}}]}`
	r := &Runner{cfg: Config{Targets: map[string]*Target{}}}
	sp, err := r.specFor(&store.Job{ID: "job-1", Owner: "race-acme", Operation: chat.Operation("default"), Input: json.RawMessage(input)}, &Route{})
	if err != nil {
		t.Fatal(err)
	}
	calls := `[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"race_owner_id\":\"c-1\"}"}}]`
	if _, bad := sp.judge(&providers.Response{FinishReason: "tool_calls", ToolCalls: json.RawMessage(calls)}); len(bad) > 0 {
		t.Fatalf("a valid tool call judged %v", bad)
	}
	for _, c := range []struct{ bytes, name string }{{schema, "response_format.json_schema"}, {params, "tools[0].function.parameters"}} {
		if !contract.SchemaCachedFor("race-acme", []byte(c.bytes), c.name) {
			t.Errorf("%s: not compiled for the job's owner", c.name)
		}
		if contract.SchemaCachedFor("race-globex", []byte(c.bytes), c.name) {
			t.Errorf("%s: kept for another owner", c.name)
		}
	}
}
