package chat

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A json_object request whose messages never mention JSON, and a json_schema
// whose name OpenAI does not accept, were stored and then refused by every
// OpenAI-compatible provider (a 400 blamed on the caller, after the key was
// bound to a failed job). They are 400s naming the field, before anything
// is stored.
func TestRequestsOpenAIWouldRefuseAreRefusedFirst(t *testing.T) {
	for name, c := range map[string]struct {
		body        string
		param, says string
	}{
		"json_object without the word": {`{"model":"m","messages":[{"role":"system","content":"Answer as an object."},{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`,
			"messages", `needs the word "JSON" in the messages`},
		"json_schema name with a space": {`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"my schema.v2","schema":{"type":"object"}}}}`,
			"response_format.json_schema.name", `for example "my_schema_v2"`},
		"json_schema name too long": {`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"` + strings.Repeat("a", 65) + `","schema":{"type":"object"}}}}`,
			"response_format.json_schema.name", "1 to 64 letters"},
	} {
		var r Request
		if err := json.Unmarshal([]byte(c.body), &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err := r.Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != c.param || !strings.Contains(re.Message, c.says) {
			t.Errorf("%s: %v; want a request error on %s saying %q", name, err, c.param, c.says)
		}
	}
	for name, body := range map[string]string{
		"json_object, JSON in a content part": `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"reply in json"}]}],"response_format":{"type":"json_object"}}`,
		"json_schema named as OpenAI allows":  `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"Triage-v2_1","schema":{"type":"object"}}}}`,
		"json_schema without a name":          `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"schema":{"type":"object"}}}}`,
	} {
		var r Request
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := r.Normalize(); err != nil {
			t.Errorf("%s: %v, want it accepted", name, err)
		}
	}
}
