package chat

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Only function tools' calls come back through the router: the adapters and
// Judge read a call by its function.name, so a custom tool's call (OpenAI's
// {"type":"custom","custom":{...}}) would be an answer the router cannot
// carry, failed as the provider's fault — and the OpenAI adapter sent such a
// tool as a bare {"type":"custom"}. Such tools are refused with a 400 naming
// "tools", never dropped silently. Found by review.
func TestNormalizeRefusesToolsTheRouterCannotCarry(t *testing.T) {
	for _, tools := range []string{
		`[{"type":"custom","custom":{"name":"code_exec","description":"runs code"}}]`,
		`[{"type":"function","function":{"name":"f"}},{"type":"web_search"}]`,
		`[{"function":{"name":"f"}}]`,
		`[{"type":7,"function":{"name":"f"}}]`,
		`[null]`,
	} {
		var r Request
		body := `{"model":"default","messages":[{"role":"user","content":"x"}],"tools":` + tools + `}`
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		_, err := r.Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != "tools" || !strings.Contains(re.Message, "function tools") {
			t.Errorf("tools %s: Normalize = %v, want a 400 on param tools saying only function tools are supported", tools, err)
		}
	}
	var r Request
	ok := `{"model":"default","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"get_time"}}]}`
	if err := json.Unmarshal([]byte(ok), &r); err != nil {
		t.Fatal(err)
	}
	in, err := r.Normalize()
	if err != nil {
		t.Fatalf("a function tool without parameters refused: %v", err)
	}
	if string(in.Tools) != `[{"type":"function","function":{"name":"get_time"}}]` {
		t.Errorf("a function tool without parameters stored as %s; want it kept as sent", in.Tools)
	}
}
