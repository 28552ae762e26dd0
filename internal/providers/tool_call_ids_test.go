package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Gemini's OpenAI-compatible API sends tool calls with an empty id. Such a
// call names its function, so it is usable: the adapter gives it an id of its
// own (unique in the answer) instead of failing every tool call of such a
// target over, streamed or not.
func TestOpenAIToolCallsWithoutIDGetOne(t *testing.T) {
	const calls = `[{"index":0,"id":"","type":"function","function":{"name":"f","arguments":"{}"}},{"index":1,"id":"","type":"function","function":{"name":"g","arguments":"{}"}}]`
	for _, streamed := range []bool{false, true} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			if streamed {
				startStream(w)
				sse(w,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":`+calls+`},"finish_reason":null}]}`,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
					"[DONE]")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"c","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":` + calls + `},"finish_reason":"tool_calls"}]}`))
		})
		a := newTestAdapter(t, srv.URL, nil)
		var resp *Response
		var err error
		if streamed {
			resp, err = a.CompleteStream(context.Background(), testRequest(), nil)
		} else {
			resp, err = a.Complete(context.Background(), testRequest())
		}
		if err != nil {
			t.Fatalf("streamed=%v: tool calls without ids refused: %v", streamed, err)
		}
		var got []struct {
			ID       string `json:"id"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(resp.ToolCalls, &got); err != nil || len(got) != 2 {
			t.Fatalf("streamed=%v: tool calls %s (%v)", streamed, resp.ToolCalls, err)
		}
		if !strings.HasPrefix(got[0].ID, "call_") || !strings.HasPrefix(got[1].ID, "call_") || got[0].ID == got[1].ID ||
			got[0].Function.Name != "f" || got[1].Function.Name != "g" {
			t.Fatalf("streamed=%v: tool calls %s, want two distinct ids of the router's and the names kept", streamed, resp.ToolCalls)
		}
	}
}

// End-of-sequence finish reasons of TGI ("eos_token", "stop_sequence"), older
// Together/vLLM builds ("eos") and gateways passing Anthropic's through
// ("end_turn") are whole answers reported as "stop"; Mistral's "model_length"
// and a passed-through "max_tokens" are "length".
func TestOpenAIOtherWholeFinishReasonsAreStopOrLength(t *testing.T) {
	for reason, want := range map[string]string{"eos": "stop", "eos_token": "stop", "stop_sequence": "stop", "end_turn": "stop",
		"model_length": "length", "max_tokens": "length"} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"c","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"` + reason + `"}]}`))
		})
		resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		if err != nil || resp.FinishReason != want || resp.Content != "hi" {
			t.Fatalf("finish_reason %q: resp %+v err %v, want a whole answer with finish_reason %s", reason, resp, err, want)
		}
	}
}
