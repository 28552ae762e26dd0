package chat

import (
	"encoding/json"
	"testing"
)

// What a replica of the previous version (Input without UnmarshalJSON: the
// plainInput type decodes exactly as it did) makes of a row a new replica
// stored, during a rolling update or after a roll-back: its spec
// (race.specFor) decodes the input, compiles the schema (in.Validator) and
// sends Tools/ToolChoice as they decode — the object form, the verbatim
// texts beside it being a member it does not know.
func TestOldReplicaReadsStoredForm(t *testing.T) {
	body := `{"model":"default","messages":[{"role":"user","content":"JSON please"}],` +
		`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}`
	var req Request
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	in, err := req.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	stored, err := in.StoredJSON()
	if err != nil {
		t.Fatal(err)
	}
	var old plainInput // the previous version's decoding
	if err := json.Unmarshal(stored, &old); err != nil {
		t.Fatalf("old replica: the stored chat request does not decode: %v", err)
	}
	oin := (*Input)(&old)
	t.Logf("old replica sends tools = %s", oin.Tools)
	t.Logf("old replica's schema = %s", oin.ResponseFormat.JSONSchema.Schema)
	if _, err := oin.Validator(); err != nil {
		t.Errorf("old replica: the response_format schema does not compile: %v", err)
	}
	if oin.Tools[0] != '[' {
		t.Errorf("old replica would send tools as %s (a JSON string)", oin.Tools)
	}
}
