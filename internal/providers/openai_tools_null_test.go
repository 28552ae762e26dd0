package providers

import (
	"context"
	"encoding/json"
	"testing"
)

// go-openai sends a tool defined without parameters as "parameters": null
// (FunctionDefinition.Parameters has no omitempty), which OpenAI answers 400
// invalid_function_parameters and Mistral refuses: the job failed as the
// caller's fault for a tool the router reads as having no parameters. The
// null is dropped; every other member, and every other tool, goes as sent.
func TestOpenAIDropsNullToolParameters(t *testing.T) {
	const tools = `[{"type":"function","function":{"name":"get_time","description":"now","parameters":null}},` +
		`{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	const want = `[{"function":{"description":"now","name":"get_time"},"type":"function"},` +
		`{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	c, url := answeringCapture(t)
	p := newTestAdapter(t, url, nil)
	req := testRequest()
	req.Tools = json.RawMessage(tools)
	for _, stream := range []bool{false, true} {
		var err error
		if stream {
			_, err = p.CompleteStream(context.Background(), req, nil)
		} else {
			_, err = p.Complete(context.Background(), req)
		}
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		var got struct {
			Tools json.RawMessage `json:"tools"`
		}
		body := c.last(t)
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("stream %v: body %s: %v", stream, body, err)
		}
		if string(got.Tools) != want {
			t.Errorf("stream %v: tools sent as %s\nwant %s", stream, got.Tools, want)
		}
	}
}
