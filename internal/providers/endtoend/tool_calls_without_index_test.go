package endtoend_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/race"
)

// Parallel tool calls streamed with neither an index nor an id (each call
// whole), in one delta or one chunk each: two calls, not one merged call.
func TestToolCallsWithoutIndexOrID(t *testing.T) {
	a := `{"type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}`
	c := `{"type":"function","function":{"name":"get_time","arguments":"{\"city\":\"Rome\"}"}}`
	shapes := map[string][]string{
		"one delta": {
			`{"id":"g","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[` + a + `,` + c + `]},"finish_reason":null}]}`,
			`{"id":"g","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			"[DONE]",
		},
		"a chunk each": {
			`{"id":"g","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[` + a + `]},"finish_reason":null}]}`,
			`{"id":"g","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[` + c + `]},"finish_reason":null}]}`,
			`{"id":"g","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			"[DONE]",
		},
	}
	for name, chunks := range shapes {
		t.Run(name, func(t *testing.T) {
			api, _ := serve(t, map[string]*race.Target{"gw": openAITarget(t, "gw", openAIStream(t, chunks...))}, "gw")
			req, _ := http.NewRequest(http.MethodPost, api.URL+"/v1/chat/completions", strings.NewReader(
				`{"model":"default","stream":true,"messages":[{"role":"user","content":"weather in Paris, time in Rome"}],`+
					`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}},{"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}]}`))
			req.Header.Set("Authorization", "Bearer "+callerKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b := new(strings.Builder)
			_, _ = io.Copy(b, resp.Body)
			body := b.String()
			if !strings.Contains(body, `"name":"get_weather"`) || !strings.Contains(body, `"name":"get_time"`) || !strings.Contains(body, "[DONE]") {
				t.Fatalf("two calls expected:\n%s", body)
			}
		})
	}
}
