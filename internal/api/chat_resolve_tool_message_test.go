package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// weatherTools is a request body's tools and tool_choice (after a comma)
// offering one function, weather.
const weatherTools = `"tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`

// weatherCall is the calls of an answer that calls weather for Paris.
const weatherCall = `[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]`

// unknownChat makes a keyed chat call of body whose attempt becomes unknown
// (b's provider hangs past its timeout) and returns its job id.
func unknownChat(t *testing.T, b *bundle, body, key string) string {
	t.Helper()
	r := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", key)
	if _, code, _, _ := openAIErr(r); r.status != http.StatusGatewayTimeout || code != "outcome_unknown" {
		t.Fatalf("status %d code %q; want 504 outcome_unknown: %s", r.status, code, r.raw)
	}
	return r.header.Get("X-Router-Job-Id")
}

// resolveWith resolves attempt 1 of job id as succeeded with result.
func resolveWith(t *testing.T, b *bundle, id, result string) reply {
	t.Helper()
	return b.do(t, http.MethodPost, "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"succeeded","result":`+result+`}`)
}

// branchedOn is a completion without what differs between two jobs and two
// answers (its id, time and usage): what a caller branches on.
func branchedOn(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("completion %s: %v", raw, err)
	}
	for _, k := range []string{"id", "created", "usage"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("completion has no %s: %s", k, raw)
		}
		delete(m, k)
	}
	return m
}

// A tool-call answer resolved into a chat job (the assistant message, or its
// tool_calls alone) is the completion a live tool-call answer makes: the
// calls in message.tool_calls, content null, finish_reason "tool_calls", on
// the plain replay and on a streamed one, with the calls' tokens in its
// estimated usage. Before, every result was text ending "stop".
func TestResolvedToolCallsAnswerAsLive(t *testing.T) {
	live := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{ToolCalls: weatherCall}
	}})
	hung := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	body := `{"model":"default","messages":[{"role":"user","content":"What is the weather in Paris?"}],` + weatherTools + `}`
	streamed := strings.Replace(body, `{"model":"default",`, `{"model":"default","stream":true,`, 1)
	want := live.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "live-call")
	if want.status != http.StatusOK {
		t.Fatalf("live call: status %d: %s", want.status, want.raw)
	}
	wantStream := live.do(t, http.MethodPost, chatPath, acmeKey, streamed, "Idempotency-Key", "live-call")
	for _, c := range []struct{ key, result string }{
		{"resolved-message", `{"role":"assistant","content":null,"tool_calls":` + weatherCall + `,"refusal":null,"annotations":[]}`},
		{"resolved-bare", `{"tool_calls":` + weatherCall + `}`},
	} {
		id := unknownChat(t, hung, body, c.key)
		if res := resolveWith(t, hung, id, c.result); res.status != http.StatusOK {
			t.Fatalf("%s: resolve: status %d: %s", c.key, res.status, res.raw)
		}
		got := hung.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", c.key)
		if got.status != http.StatusOK || !reflect.DeepEqual(branchedOn(t, got.raw), branchedOn(t, want.raw)) {
			t.Fatalf("%s: replay of the resolved job: status %d\n%s\nwant as the live tool-call answer:\n%s", c.key, got.status, got.raw, want.raw)
		}
		u, _ := got.body["usage"].(map[string]any)
		if n, _ := u["completion_tokens"].(float64); n == 0 || u["estimated"] != true {
			t.Fatalf("%s: usage %v; want the calls counted as completion tokens, estimated", c.key, u)
		}
		gotStream := hung.do(t, http.MethodPost, chatPath, acmeKey, streamed, "Idempotency-Key", c.key)
		if g, w := streamedToolDeltas(t, string(gotStream.raw)), streamedToolDeltas(t, string(wantStream.raw)); len(w) != 1 || !reflect.DeepEqual(g, w) ||
			!strings.Contains(string(gotStream.raw), `"finish_reason":"tool_calls"`) {
			t.Fatalf("%s: streamed replay's tool-call deltas %v, want %v and finish_reason tool_calls as live:\n%s", c.key, g, w, gotStream.raw)
		}
	}
}

// A malformed assistant message is 422 invalid-result naming what is wrong
// and how to send it, and nothing is written: the attempt stays unknown and
// a correct resolution then settles it.
func TestResolveMalformedToolCallsRefused(t *testing.T) {
	b := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	body := `{"model":"default","messages":[{"role":"user","content":"What is the weather in Paris?"}],` + weatherTools + `,"tool_choice":"required"}`
	id := unknownChat(t, b, body, "malformed-calls")
	failed := `resolve the attempt as "failed"`
	for _, c := range []struct{ result, path, says, fix string }{
		{`{"role":"user","tool_calls":` + weatherCall + `}`, "$.role", `role is "user"`, `send "role":"assistant"`},
		{`{"role":"assistant","content":["x"],"tool_calls":` + weatherCall + `}`, "$.content", `content is ["x"]`, "send it as a string"},
		{`{"tool_calls":` + weatherCall + `,"reasoning_content":1}`, "$.reasoning_content", "reasoning_content is 1", "send it as a string"},
		{`{"role":"assistant","tool_calls":` + weatherCall + `,"function_call":{"name":"weather"}}`, "$.function_call", "not part of an answer", "leave it out"},
		{`{"role":"assistant","tool_calls":{"id":"call_1"}}`, "$.tool_calls", "not a non-empty JSON array", failed},
		{`{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"weather","arguments":"{}"}}]}`, "$.tool_calls[0].id", "has no id", `{"id":"call_`},
		{`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"launch","arguments":"{}"}}]}`,
			"$.tool_calls[0].function.name", "do not offer", failed},
		{`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"weather","arguments":{"city":"Paris"}}}]}`,
			"$.tool_calls[0].function.arguments", "not a string holding a JSON object", "written as a string"},
		// No call sent: the result holds none; the provider is not blamed,
		// and the message to send is shown.
		{`{"role":"assistant","tool_calls":null}`, "$.tool_calls", "the result holds none", `"tool_calls":[`},
		{`{"role":"assistant","tool_calls":[]}`, "$.tool_calls", "the result holds none", `"tool_calls":[`},
		{`"It is sunny in Paris."`, "$.tool_calls", "the result holds none", `"tool_calls":[`},
	} {
		res := resolveWith(t, b, id, c.result)
		vs, _ := res.body["violations"].([]any)
		var v map[string]any
		if len(vs) > 0 {
			v, _ = vs[0].(map[string]any)
		}
		msg, _ := v["message"].(string)
		if res.status != http.StatusUnprocessableEntity || res.body["type"] != "https://router.dev/problems/invalid-result" ||
			v["path"] != c.path || !strings.Contains(msg, c.says) || !strings.Contains(msg, c.fix) || strings.Contains(msg, "the provider answered") {
			t.Fatalf("result %s: status %d %s; want 422 invalid-result at %s saying %q and %q", c.result, res.status, res.raw, c.path, c.says, c.fix)
		}
	}
	job := b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")
	atts, _ := job.body["attempts"].([]any)
	if job.body["state"] != "unknown" || len(atts) != 1 || atts[0].(map[string]any)["state"] != "unknown" || job.body["result"] != nil {
		t.Fatalf("after the refused resolutions the job is %s; want it unknown, its attempt unknown, no result", job.raw)
	}
	if res := resolveWith(t, b, id, `{"role":"assistant","content":"Checking.","tool_calls":`+weatherCall+`}`); res.status != http.StatusOK {
		t.Fatalf("resolve: status %d: %s", res.status, res.raw)
	}
	rep := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "malformed-calls")
	choices, _ := rep.body["choices"].([]any)
	if len(choices) != 1 {
		t.Fatalf("replay: %s", rep.raw)
	}
	ch := choices[0].(map[string]any)
	msg := ch["message"].(map[string]any)
	calls, _ := msg["tool_calls"].([]any)
	if ch["finish_reason"] != "tool_calls" || msg["content"] != "Checking." || len(calls) != 1 {
		t.Fatalf("replay %s; want content Checking., one call, finish_reason tool_calls", rep.raw)
	}
}

// Results that are not a tool-call answer are read as before: a string is the
// content; an object is the content as its JSON text — the object a
// response_format asks for — when the request offered no tools, even with
// a tool_calls member, and when it offered tools, unless it has tool_calls
// or "role": "assistant".
func TestResolveChatContentUnchanged(t *testing.T) {
	b := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	asked := `{"model":"default","messages":[{"role":"user","content":"A city as JSON, please."}],"response_format":{"type":"json_object"}`
	for _, c := range []struct{ key, body, result, content string }{
		{"text-tools", `{"model":"default","messages":[{"role":"user","content":"Hello?"}],` + weatherTools + `}`, `"Hello!"`, "Hello!"},
		{"object-no-tools", asked + `}`, `{"tool_calls":[1]}`, `{"tool_calls":[1]}`},
		{"object-tools", asked + `,` + weatherTools + `}`, `{"city":"Oslo"}`, `{"city":"Oslo"}`},
		{"message-text", `{"model":"default","messages":[{"role":"user","content":"Hello?"}],` + weatherTools + `}`,
			`{"role":"assistant","content":"Hello!","tool_calls":null}`, "Hello!"},
		// An empty list is no calls, as some OpenAI-compatible servers write it.
		{"message-no-calls", `{"model":"default","messages":[{"role":"user","content":"Hello?"}],` + weatherTools + `}`,
			`{"role":"assistant","content":"Hello!","tool_calls":[ ]}`, "Hello!"},
	} {
		id := unknownChat(t, b, c.body, c.key)
		if res := resolveWith(t, b, id, c.result); res.status != http.StatusOK {
			t.Fatalf("%s: resolve: status %d: %s", c.key, res.status, res.raw)
		}
		rep := b.do(t, http.MethodPost, chatPath, acmeKey, c.body, "Idempotency-Key", c.key)
		choices, _ := rep.body["choices"].([]any)
		if len(choices) != 1 {
			t.Fatalf("%s: replay %s", c.key, rep.raw)
		}
		ch := choices[0].(map[string]any)
		msg := ch["message"].(map[string]any)
		if _, calls := msg["tool_calls"]; ch["finish_reason"] != "stop" || msg["content"] != c.content || calls {
			t.Fatalf("%s: replay %s; want content %s, no tool calls, finish_reason stop", c.key, rep.raw, c.content)
		}
	}
}
