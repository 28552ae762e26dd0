package chat

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzChatRequest: any /v1/chat/completions body decodes and normalises
// without a panic; an accepted request's intent survives being stored (its
// JSON decodes back to the same Input), and its schema validator, when it has
// one, compiled without loading anything.
func FuzzChatRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"default","messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"temperature":0,"max_completion_tokens":5,"seed":1}`,
		`{"model":"default","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"42"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto"}`,
		`{"model":"default","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}}}}`,
		`{"model":"default","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"schema":{"$ref":"file:///etc/hostname"}}}}`,
		`{"model":"default","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"},"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"default","messages":[{"role":"user","content":"x"}],"top_p":0.5,"stop":["END"],"presence_penalty":-0.5,"frequency_penalty":1.5,"logit_bias":{"50256":-100,"7":3},"reasoning_effort":"low","logprobs":false}`,
		`{"model":"default","messages":[{"role":"robot","content":"x"}],"n":2}`,
		`{"model":"","messages":[]}`, `{"messages":[{"role":"user","content":{"a":1}}]}`, `[]`, `{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req Request
		if err := json.NewDecoder(bytes.NewReader(body)).Decode(&req); err != nil {
			return
		}
		in, err := req.Normalize()
		if err != nil {
			if _, ok := err.(*RequestError); !ok {
				t.Fatalf("Normalize error of type %T: %v", err, err)
			}
			return
		}
		stored, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("accepted intent does not encode: %v", err)
		}
		var back Input
		if err := json.Unmarshal(stored, &back); err != nil {
			t.Fatalf("stored intent does not decode: %v", err)
		}
		again, err := json.Marshal(&back)
		if err != nil || !bytes.Equal(again, stored) {
			t.Fatalf("stored intent changes on a round trip:\n%s\n%s", stored, again)
		}
		if _, err := back.Validator(); err != nil {
			t.Fatalf("the stored intent's schema no longer compiles: %v", err)
		}
		// Schemas compare as JSON values: storing compacts and re-escapes them.
		pa, pb := in.ProviderFormat(), back.ProviderFormat()
		if (pa == nil) != (pb == nil) || pa != nil && (pa.Type != pb.Type || pa.Name != pb.Name || pa.Strict != pb.Strict || !sameJSON(pa.Schema, pb.Schema)) {
			t.Fatalf("provider format differs after a round trip: %+v vs %+v", pa, pb)
		}
	})
}

func sameJSON(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
