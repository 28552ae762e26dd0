package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
)

// streamToolCalls streams the tool-call deltas (each a JSON array of
// tool_calls) and finish_reason tool_calls, and returns the calls the
// adapter assembled as id, name and arguments.
func streamToolCalls(t *testing.T, deltas ...string) [][3]string {
	t.Helper()
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		for i, d := range deltas {
			role := ""
			if i == 0 {
				role = `"role":"assistant",`
			}
			sse(w, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{`+role+`"tool_calls":`+d+`},"finish_reason":null}]}`)
		}
		sse(w, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]")
	})
	resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	var got []struct {
		ID       string                           `json:"id"`
		Function struct{ Name, Arguments string } `json:"function"`
	}
	if err := json.Unmarshal(resp.ToolCalls, &got); err != nil {
		t.Fatalf("tool calls %s: %v", resp.ToolCalls, err)
	}
	out := make([][3]string, len(got))
	for i, c := range got {
		out[i] = [3]string{c.ID, c.Function.Name, c.Function.Arguments}
	}
	return out
}

func sameCalls(a, b [][3]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Two tool calls each sent whole at the same index with distinct ids are two
// calls, not one whose id and name are the second's and whose arguments are
// `{"a":1}{"b":2}` (returned as a success). A delta without an id after them
// continues the second. Found by review.
func TestStreamToolCallsAtOneIndexWithDistinctIDsAreNotMerged(t *testing.T) {
	got := streamToolCalls(t,
		`[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]`,
		`[{"index":0,"id":"call_b","type":"function","function":{"name":"g","arguments":"{\"b\":"}}]`,
		`[{"index":0,"function":{"arguments":"2}"}}]`,
		`[{"index":1,"id":"call_c","type":"function","function":{"name":"h","arguments":"{}"}}]`)
	want := [][3]string{{"call_a", "f", `{"a":1}`}, {"call_b", "g", `{"b":2}`}, {"call_c", "h", `{}`}}
	if !sameCalls(got, want) {
		t.Fatalf("tool calls %q, want %q", got, want)
	}
}

// A call whose deltas carry no index and repeat its id each time is one
// call; a delta without an index naming another id starts the next.
func TestStreamToolCallDeltasWithoutIndexRepeatingTheID(t *testing.T) {
	got := streamToolCalls(t,
		`[{"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"a\""}}]`,
		`[{"id":"call_a","type":"function","function":{"arguments":":1}"}}]`,
		`[{"id":"call_b","type":"function","function":{"name":"g","arguments":"{"}}]`,
		`[{"function":{"arguments":"}"}}]`)
	want := [][3]string{{"call_a", "f", `{"a":1}`}, {"call_b", "g", `{}`}}
	if !sameCalls(got, want) {
		t.Fatalf("tool calls %q, want %q", got, want)
	}
}

// Deltas at one index that repeat the call's id are one call, as before.
func TestStreamToolCallDeltasRepeatingTheIDAtItsIndex(t *testing.T) {
	got := streamToolCalls(t,
		`[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"a\""}}]`,
		`[{"index":0,"id":"call_a","function":{"arguments":":1}"}}]`)
	want := [][3]string{{"call_a", "f", `{"a":1}`}}
	if !sameCalls(got, want) {
		t.Fatalf("tool calls %q, want %q", got, want)
	}
}

// Calls sent at one index are bounded as indexes are: more than
// maxStreamToolCalls is the provider's error (stream_malformed).
func TestStreamToolCallsAtOneIndexAreBounded(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		for i := 0; i <= maxStreamToolCalls; i++ {
			sse(w, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_`+strconv.Itoa(i)+`","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}`)
		}
		sse(w, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]")
	})
	_, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
	if e := mustError(t, err); e.Kind != KindStreamMalformed {
		t.Fatalf("%d calls at index 0: %s (%q), want stream_malformed", maxStreamToolCalls+1, e.Kind, e.Message)
	}
}
