package tokens

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// Every field of a message is sent to providers (the OpenAI body writes each
// one; the Anthropic adapter turns a refusal into text): each must raise the
// count and the byte bound that lets routing skip counting, or a request can
// pass the window check by putting its bulk in a field left out (a refusal
// was). A field added to providers.Message fails here until it is counted.
// ReasoningContent alone is left out, on purpose: it is sent only to the
// providers configured with send_reasoning_content, and the count is one per
// encoding for the whole route — counting it would refuse, as too long for
// their windows, requests that the other targets are sent without it (it
// was never counted before it was passed on).
func TestCountMessagesCountsEveryMessageField(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 200)
	typ := reflect.TypeOf(providers.Message{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "ReasoningContent" {
			continue
		}
		var m providers.Message
		v := reflect.ValueOf(&m).Elem().Field(i)
		switch {
		case f.Type.Kind() == reflect.String:
			v.SetString(long)
		case f.Type == reflect.TypeOf(json.RawMessage(nil)):
			b, _ := json.Marshal([]string{long})
			v.SetBytes(b)
		default:
			t.Fatalf("providers.Message.%s is a %s: count it in CountMessages and ByteBound, and teach this test to fill it", f.Name, f.Type)
		}
		for _, enc := range []string{Cl100kBase, O200kBase} {
			empty, _ := CountMessages(enc, []providers.Message{{}})
			n, err := CountMessages(enc, []providers.Message{m})
			if err != nil {
				t.Fatal(err)
			}
			if n-empty < 400 {
				t.Errorf("%s: a message whose %s holds ~1,000 tokens counts %d more than an empty one", enc, f.Name, n-empty)
			}
			if b := ByteBound([]providers.Message{m}); b < n {
				t.Errorf("%s: byte bound %d below the count %d with %s set", enc, b, n, f.Name)
			}
		}
	}
}

// Counted adds what goes with every call: the tools, the schema (with the
// format's name) and the description, without changing the messages.
func TestCountedAddsToolsSchemaNameAndDescription(t *testing.T) {
	msgs := []providers.Message{{Role: "user", Content: "hi"}}
	tools := json.RawMessage(`[{"type":"function","function":{"name":"f"}}]`)
	format := &providers.ResponseFormat{Type: "json_schema", Name: "answer", Description: "what the answer holds",
		Schema: []byte("{\n  \"type\": \"object\"\n}")}
	got := Counted(msgs, format, "", tools)
	if len(got) != 4 || got[1].Content != string(tools) || got[2].Content != `{"type":"object"}` || got[2].Name != "answer" ||
		got[3].Content != "what the answer holds" {
		t.Fatalf("Counted = %+v, want the message, the tools, the compact schema named answer and the description", got)
	}
	if len(msgs) != 1 || cap(msgs) != 1 {
		t.Fatalf("Counted changed the messages: %+v", msgs)
	}
	if got := Counted(msgs, nil, "", nil); &got[0] != &msgs[0] {
		t.Fatal("Counted copied the messages of a request without tools or a format")
	}
}

func TestMaxTokensSent(t *testing.T) {
	for _, c := range []struct{ requested, def, want int }{
		{100, 4096, 100}, {0, 4096, 4096}, {-5, 4096, 4096}, {0, 0, 0}, {-5, 0, 0},
	} {
		if got, byDefault := MaxTokensSent(c.requested, c.def); got != c.want || byDefault != (c.requested <= 0 && c.def > 0) {
			t.Errorf("MaxTokensSent(%d, %d) = %d, %v", c.requested, c.def, got, byDefault)
		}
	}
}

// An assistant turn's reasoning_content is not counted (nor in the byte
// bound): most targets are sent the turn without it (send_reasoning_content
// is off by default), and routing's count is one per encoding for the route.
func TestReasoningContentIsNotCounted(t *testing.T) {
	plain := []providers.Message{{Role: "assistant", Content: "ok"}}
	with := []providers.Message{{Role: "assistant", Content: "ok", ReasoningContent: strings.Repeat("thinking hard ", 500)}}
	a, _ := CountMessages(Cl100kBase, plain)
	b, _ := CountMessages(Cl100kBase, with)
	if a != b || ByteBound(plain) != ByteBound(with) {
		t.Fatalf("count %d vs %d, byte bound %d vs %d: reasoning_content counted", a, b, ByteBound(plain), ByteBound(with))
	}
}
