package tokens

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// prettyTools is twenty function tools, indented as a caller's JSON library
// may write them, and their compact text, which is what the adapters send.
func prettyTools(t *testing.T) (pretty, compact []byte) {
	t.Helper()
	var defs []map[string]any
	for i := range 20 {
		defs = append(defs, map[string]any{"type": "function", "function": map[string]any{
			"name": fmt.Sprintf("lookup_%d", i), "description": "Look up a customer record by id.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{
				"id":     map[string]any{"type": "string", "description": "customer id"},
				"fields": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			}, "required": []string{"id"}}}})
	}
	pretty, err := json.MarshalIndent(defs, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, pretty); err != nil {
		t.Fatal(err)
	}
	return pretty, b.Bytes()
}

// Tools and tool calls are sent compact whatever their indentation (both
// adapters re-encode them): a request counted as written was refused by
// routing as too long for a window that holds it as sent.
func TestCountedCountsToolsAndToolCallsAsSentCompact(t *testing.T) {
	pretty, compact := prettyTools(t)
	msgs := []providers.Message{{Role: "user", Content: "Look up every customer."}}
	for _, enc := range []string{Cl100kBase, O200kBase} {
		sent, _ := CountMessages(enc, Counted(msgs, nil, "", compact))
		got, err := CountMessages(enc, Counted(msgs, nil, "", pretty))
		if err != nil || got != sent {
			t.Errorf("%s: pretty-printed tools count %d (%v), the compact tools sent count %d", enc, got, err, sent)
		}
	}
	hist := func(calls []byte) []providers.Message {
		return []providers.Message{{Role: "user", Content: "Look up every customer."}, {Role: "assistant", ToolCalls: calls}}
	}
	// Whitespace inside strings (arguments, descriptions) is sent and counted.
	prettyCalls := []byte("[\n  {\n    \"id\": \"call_1\",\n    \"type\": \"function\",\n    \"function\": {\"name\": \"lookup\", \"arguments\": \"{\\\"id\\\": \\\"c 1\\\"}\"}\n  }\n]\n")
	compactCalls := []byte(`[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"id\": \"c 1\"}"}}]`)
	pm := hist(prettyCalls)
	got := Counted(pm, nil, "", nil)
	if string(got[1].ToolCalls) != string(compactCalls) {
		t.Errorf("tool calls counted as %s, want the compact %s", got[1].ToolCalls, compactCalls)
	}
	if string(pm[1].ToolCalls) != string(prettyCalls) {
		t.Errorf("Counted changed the caller's tool calls: %s", pm[1].ToolCalls)
	}
	for _, enc := range []string{Cl100kBase, O200kBase} {
		sent, _ := CountMessages(enc, hist(compactCalls))
		n, _ := CountMessages(enc, got)
		if n != sent {
			t.Errorf("%s: pretty-printed tool calls count %d, the compact ones sent count %d", enc, n, sent)
		}
		if b := ByteBound(got); b < n {
			t.Errorf("%s: byte bound %d below the count %d", enc, b, n)
		}
	}
}

// What is not valid JSON cannot be compacted: it is counted as written, not
// dropped or refused here (the API refuses it).
func TestCountedCountsInvalidJSONAsWritten(t *testing.T) {
	bad := []byte("[ {\"id\": ")
	msgs := []providers.Message{{Role: "assistant", ToolCalls: bad}}
	got := Counted(msgs, nil, "", json.RawMessage(bad))
	if len(got) != 2 || string(got[0].ToolCalls) != string(bad) || got[1].Content != string(bad) {
		t.Fatalf("Counted = %+v, want the invalid tool calls and tools as written", got)
	}
}

// Counted runs for every job: compact tool calls (what clients usually send
// back) and a request without tools cost no allocation.
func TestCountedAllocatesNothingForCompactToolCalls(t *testing.T) {
	msgs := []providers.Message{
		{Role: "user", Content: "Look up every customer."},
		{Role: "assistant", ToolCalls: []byte(`[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"id\": \"c 1\"}"}}]`)},
		{Role: "tool", ToolCallID: "call_1", Content: "{\"name\": \"Ada\"}"},
	}
	if n := testing.AllocsPerRun(100, func() {
		if got := Counted(msgs, nil, "", nil); &got[0] != &msgs[0] {
			t.Fatal("Counted copied messages whose tool calls are compact")
		}
	}); n != 0 {
		t.Errorf("Counted allocated %v times for compact tool calls and no tools", n)
	}
}

func TestSpaced(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{`{"a":"b c"}`, false}, {`{"a":"b\" c"}`, false}, {`{"a":"b\\"}`, false}, {`[1,2]`, false}, {``, false},
		{`{"a": "b"}`, true}, {"[1,\n2]", true}, {`{"a":"b\\" }`, true}, {" {}", true}, {"{}\t", true},
		{strings.Repeat(`{"k":"v v"},`, 100) + "\r", true},
	} {
		if got := spaced([]byte(c.in)); got != c.want {
			t.Errorf("spaced(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
