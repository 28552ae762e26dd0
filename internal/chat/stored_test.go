package chat_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/store"
)

// storedBodies use every member the stored form holds as text, in key
// orders jsonb would change, with numbers it would re-spell and characters
// encoding/json escapes.
var storedBodies = []string{
	`{"model":"m","messages":[{"role":"user","content":"hi <b>"}]}`,
	`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi","name":"ann"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"type":"function","id":"c1","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"z":1e3,"a":1.0}}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"42"},{"role":"user","content":"and?"}],"temperature":0.5,` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"cot","strict":true,"schema":{"type":"object","properties":{"reasoning":{"type":"string","description":"a < b & c"},"answer":{"type":"number","maximum":1e3}},"required":["reasoning","answer"]}}},` +
		`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"zeta":{"type":"string"},"a":{"type":"integer","minimum":1.50}}}}}],` +
		`"tool_choice":{"type":"function","function":{"name":"f"}},"chat_template_kwargs":{"thinking_budget":1e3,"enable_thinking":true},"seed":7}`,
	`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","description":"\u00e9\"q\""}}],"tool_choice":"auto"}`,
}

// A chat job stores its intent with the caller's schemas and tools' text
// beside them (jsonb keeps a string's bytes): every form read back — the handler's
// bytes, the row with its keys sorted as jsonb gives it, a row stored in the
// object form before — decodes to the same intent, the stored text sends
// the caller's bytes, and the fingerprint is the one the object form had,
// so a keyed resend across the upgrade finds the job an old replica stored.
func TestStoredIntentKeepsBytesAndFingerprint(t *testing.T) {
	for _, body := range storedBodies {
		var req chat.Request
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatal(err)
		}
		in, err := req.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		object, err := json.Marshal(in) // what replicas before stored, and hashed
		if err != nil {
			t.Fatal(err)
		}
		stored, err := in.StoredJSON()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := store.Fingerprint("chat:default", "", "default", object)
		v, err := chat.IntentValue(stored)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := store.FingerprintValue("chat:default", "", "default", v)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the stored form's fingerprint differs from the object form's:\n%s\n%s", body, stored, object)
		}
		if old, _ := chat.IntentValue(object); !reflect.DeepEqual(old, v) {
			t.Errorf("%s: IntentValue of the object form differs from the stored form's", body)
		}
		// jsonb: every object's keys re-sorted; a string's bytes kept.
		var anyV any
		_ = json.Unmarshal(stored, &anyV)
		sorted, _ := json.Marshal(anyV)
		var first, later, oldRow chat.Input
		for _, c := range []struct {
			b  []byte
			in *chat.Input
		}{{stored, &first}, {sorted, &later}, {object, &oldRow}} {
			if err := json.Unmarshal(c.b, c.in); err != nil {
				t.Fatalf("%s: %v", c.b, err)
			}
			if again, _ := json.Marshal(c.in); !bytes.Equal(again, object) {
				t.Errorf("%s\ndecodes to another intent:\n%s\nwant\n%s", c.b, again, object)
			}
		}
		if !reflect.DeepEqual(first.Tools, later.Tools) || !reflect.DeepEqual(first.ProviderFormat(), later.ProviderFormat()) ||
			!reflect.DeepEqual(first.ChatTemplateKwargs, later.ChatTemplateKwargs) || !reflect.DeepEqual(first.Messages, later.Messages) ||
			!reflect.DeepEqual(first.ToolChoice, later.ToolChoice) {
			t.Errorf("%s: a later round reads other bytes than the first:\n%+v\n%+v", body, first, later)
		}
		if in.ResponseFormat != nil && !strings.Contains(string(first.ProviderFormat().Schema), `"reasoning":{"type":"string","description":"a < b & c"},"answer":{"type":"number","maximum":1e3}`) {
			t.Errorf("the schema sent is not the caller's, in its order with its numbers: %s", first.ProviderFormat().Schema)
		}
		if in.ChatTemplateKwargs != nil && string(later.ChatTemplateKwargs) != `{"thinking_budget":1e3,"enable_thinking":true}` {
			t.Errorf("chat_template_kwargs read back as %s", later.ChatTemplateKwargs)
		}
		// Shown as objects (GET /v1/jobs/{id}), in the caller's order.
		for _, b := range [][]byte{stored, sorted} {
			shown, _ := chat.ShownInput(b)
			var x, y any
			if json.Unmarshal(shown, &x) != nil || json.Unmarshal(object, &y) != nil || !reflect.DeepEqual(x, y) {
				t.Errorf("shown input\n%s\nis not the intent\n%s", shown, object)
			}
		}
		if shown, changed := chat.ShownInput(object); changed || !bytes.Equal(shown, object) {
			t.Errorf("an input in the object form is shown changed: %s", shown)
		}
	}
}
