package chat_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/store"
)

// The fingerprint of the stored form (as api.chatIntent computes it) equals
// the fingerprint replicas before the stored form computed (of json.Marshal(in)).
func TestStoredFormFingerprintUnchanged(t *testing.T) {
	bodies := []string{
		`{"model":"default","messages":[{"role":"user","content":"JSON <b>&</b>"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","description":"<a> & \u2028 \u00e9 \ud83d\ude00","properties":{"b":{"type":"number","maximum":1.0E+2,"minimum":-0.0}}}}}}`,
		`{"model":"default","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":\"<x>\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}],"tools":[{"type":"function","function":{"name":"f","description":"a \"q\" <tag>","parameters":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string"}}}}}],"tool_choice":{"type":"function","function":{"name":"f"}},"chat_template_kwargs":{"enable_thinking":false,"x":[1,2.50,"<"]}}`,
		`{"model":"default","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{}}}],"tool_choice":"auto"}`,
	}
	for i, body := range bodies {
		var req chat.Request
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		in, err := req.Normalize()
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		object, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		before, err := store.Fingerprint("chat:default", "", "default", object)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := in.StoredJSON()
		if err != nil {
			t.Fatal(err)
		}
		v, err := chat.IntentValue(stored)
		if err != nil {
			t.Fatal(err)
		}
		now, err := store.FingerprintValue("chat:default", "", "default", v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, now) {
			t.Errorf("%d: fingerprint changed\n object: %s\n stored: %s", i, object, stored)
		}
		// Round trip: decoding the stored form gives back the object form.
		var back chat.Input
		if err := json.Unmarshal(stored, &back); err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(&back)
		if !bytes.Equal(again, object) {
			t.Errorf("%d: stored form does not decode back\n object: %s\n back:   %s", i, object, again)
		}
		shown, _ := chat.ShownInput(stored)
		t.Logf("%d shown: %s", i, shown)
	}
}
