package api

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/store"
)

// A resolution of a stored chat job is judged against its response_format
// schema compiled for the job's owner, kept in that owner's part of the
// schema cache only.
func TestResolutionCompilesTheSchemaForTheJobsOwner(t *testing.T) {
	schema := `{"type":"object","properties":{"resolve_owner_field":{"type":"string"}},"required":["resolve_owner_field"],"additionalProperties":false}`
	input := `{"messages":[{"role":"user","content":"Reply in JSON."}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":` + schema + `}}}`
	s := New(Config{}, Deps{})
	job := &store.Job{ID: "job-1", Owner: "resolve-acme", Operation: chat.Operation("default"), Input: json.RawMessage(input)}
	if _, _, bad, err := s.judgeResolution(job, 1, json.RawMessage(`{"resolve_owner_field":"x"}`)); err != nil || len(bad) > 0 {
		t.Fatalf("a valid resolution: %v %v", bad, err)
	}
	if !contract.SchemaCachedFor("resolve-acme", []byte(schema), "response_format.json_schema") {
		t.Error("not compiled for the job's owner")
	}
	if contract.SchemaCachedFor("resolve-globex", []byte(schema), "response_format.json_schema") {
		t.Error("kept for another owner")
	}
}
