package chat

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

const weatherTools = `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}},` +
	`{"type":"function","function":{"name":"get_time"}},` +
	`{"type":"function","function":{"name":"book","strict":true,"parameters":{"type":"object","properties":{"city":{"type":"string"}},` +
	`"required":["city"],"additionalProperties":false}}}]`

// callTo is one tool call of function name with arguments args (a JSON
// value: a string, or another type; "" leaves arguments out).
func callTo(name, args string) json.RawMessage {
	fn := `"name":"` + name + `"`
	if args != "" {
		fn += `,"arguments":` + args
	}
	return json.RawMessage(`[{"id":"call_1","type":"function","function":{` + fn + `}}]`)
}

// toolsInput is a normalised request offering weatherTools with tool_choice
// choice ("" for none).
func toolsInput(t *testing.T, choice string) *Input {
	t.Helper()
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":` + weatherTools
	if choice != "" {
		body += `,"tool_choice":` + choice
	}
	in, err := parse(t, body+`}`).Normalize()
	if err != nil {
		t.Fatalf("%s: %v", choice, err)
	}
	return in
}

// Tool calls were judged by their shape only: a call cut short (`{"city":
// "Par`), a call to a function the request did not offer, a call tool_choice
// forbade, no call when tool_choice required one, and arguments a strict
// tool's parameters reject all won. Each is the provider's fault now (rule
// tool_calls: the race fails over). Found by review.
func TestJudgeHoldsToolCallsToTheRequestsContract(t *testing.T) {
	named := `{"type":"function","function":{"name":"get_time"}}`
	allowed := `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"get_time"}}]}}`
	refused := []struct {
		name, choice string
		calls        json.RawMessage
		finish, want string
	}{
		{"cut arguments", "", callTo("get_weather", `"{\"city\": \"Par"`), "tool_calls", "not a JSON object"},
		{"arguments an array", "", callTo("get_weather", `"[1]"`), "tool_calls", "not a JSON object"},
		{"arguments not a string", "", callTo("get_weather", `{"city":"Paris"}`), "tool_calls", "not a string"},
		{"arguments with a key twice", "", callTo("get_weather", `"{\"city\":\"a\",\"city\":\"b\"}"`), "tool_calls", "city"},
		{"function not offered", "", callTo("launch", `"{}"`), "tool_calls", "do not offer"},
		{"tool_choice none", `"none"`, callTo("get_time", `"{}"`), "tool_calls", "tool_choice none"},
		{"named, another called", named, callTo("get_weather", `"{}"`), "tool_calls", `names function "get_time"`},
		{"allowed_tools, another called", allowed, callTo("get_weather", `"{}"`), "tool_calls", "allows only"},
		{"strict, argument missing", "", callTo("book", `"{}"`), "tool_calls", "strict function"},
		{"strict, no arguments", "", callTo("book", ""), "tool_calls", "strict function"},
		{"strict, blank arguments", "", callTo("book", `"  \n"`), "tool_calls", "strict function"},
		{"strict, extra argument", "", callTo("book", `"{\"city\":\"Oslo\",\"x\":1}"`), "tool_calls", "strict function"},
		{"cut at the caller's max_tokens", "", callTo("get_weather", `"{\"city\": \"Par"`), "length", "max_tokens"},
		{"required, no call", `"required"`, nil, "stop", "requires a tool call"},
		{"named, no call", named, nil, "stop", "requires a tool call"},
		{"allowed_tools required, no call", allowed, nil, "stop", "requires a tool call"},
	}
	for _, c := range refused {
		resp := &providers.Response{Content: "sunny", ToolCalls: c.calls, FinishReason: c.finish}
		_, vs := Judge(toolsInput(t, c.choice), nil, "job-1", resp)
		// The caller's own doing — arguments its strict schema rejects, a
		// call its max_tokens cut — is the caller's rule tool_arguments:
		// failed over without counting against the target's breaker.
		rule := "tool_calls"
		if strings.HasPrefix(c.name, "strict") || c.finish == "length" {
			rule = "tool_arguments"
		}
		if len(vs) != 1 || vs[0].Rule != rule || ProviderRule(vs[0].Rule) != (rule == "tool_calls") || !strings.Contains(vs[0].Message, c.want) {
			t.Errorf("%s: %+v, want a %s violation saying %q", c.name, vs, rule, c.want)
		}
	}
	accepted := []struct {
		name, choice string
		calls        json.RawMessage
		finish       string
	}{
		{"arguments empty", "", callTo("get_time", `""`), "tool_calls"},
		{"arguments missing", "", callTo("get_time", ""), "tool_calls"},
		{"arguments null", "", callTo("get_time", "null"), "tool_calls"},
		{"arguments blank", "", callTo("get_time", `" \n"`), "tool_calls"},
		{"arguments whole", "", callTo("get_weather", `" {\"city\":\"Paris\"} "`), "tool_calls"},
		{"strict, valid", "", callTo("book", `"{\"city\":\"Oslo\"}"`), "tool_calls"},
		{"named, that one", named, callTo("get_time", `"{}"`), "tool_calls"},
		{"allowed_tools, that one", allowed, callTo("get_time", `"{}"`), "tool_calls"},
		{"required, a call", `"required"`, callTo("get_weather", `"{}"`), "tool_calls"},
		{"auto, no call", `"auto"`, nil, "stop"},
		{"none, no call", `"none"`, nil, "stop"},
		{"required, cut at max_tokens", `"required"`, nil, "length"},
	}
	for _, c := range accepted {
		resp := &providers.Response{Content: "sunny", ToolCalls: c.calls, FinishReason: c.finish}
		if doc, vs := Judge(toolsInput(t, c.choice), nil, "job-1", resp); len(vs) > 0 || doc == nil {
			t.Errorf("%s: refused %+v", c.name, vs)
		}
	}
}

// Normalize refuses what it cannot hold an answer to, and what is no
// request: a strict tool whose parameters do not compile, a tool_choice
// object without a valid type or naming a function not offered,
// response_format without a type, a user message whose content is null.
func TestNormalizeRefusesABrokenToolContract(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	const tool = `"tools":[{"type":"function","function":{"name":"f"}}]`
	for _, c := range []struct{ fields, param string }{
		{`"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g","strict":true,"parameters":{"type":"nope"}}}]`,
			"tools[1].function.parameters"},
		{`"tools":[{"type":"function","function":{"name":"g","strict":true,"parameters":{"type":"string","pattern":"(?<=a)b"}}}]`,
			"tools[0].function.parameters"},
		{`"tools":[{"type":"function","function":{"parameters":{}}}]`, "tools[0].function.name"},
		{`"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":"g"}]`, "tools[1].function"},
		{tool + `,"tool_choice":{}`, "tool_choice"},
		{tool + `,"tool_choice":{"type":"function"}`, "tool_choice"},
		{tool + `,"tool_choice":{"type":"function","function":{"name":"g"}}`, "tool_choice"},
		{tool + `,"tool_choice":{"type":"custom","custom":{"name":"f"}}`, "tool_choice"},
		{tool + `,"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"any","tools":[{"type":"function","function":{"name":"f"}}]}}`, "tool_choice"},
		{tool + `,"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"g"}}]}}`, "tool_choice"},
		{tool + `,"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}`, "tool_choice"},
		{`"tool_choice":{}`, "tool_choice"},
		{`"response_format":{}`, "response_format.type"},
		{`"response_format":{"type":""}`, "response_format.type"},
	} {
		_, err := parse(t, `{"model":"m",`+msgs+`,`+c.fields+`}`).Normalize()
		if re, ok := err.(*RequestError); !ok || re.Param != c.param {
			t.Errorf("%s: err %v, want a RequestError naming %s", c.fields, err, c.param)
		}
	}
	_, err := parse(t, `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":null}]}`).Normalize()
	if re, ok := err.(*RequestError); !ok || re.Param != "messages[1].content" {
		t.Errorf("user content null: err %v, want a RequestError naming messages[1].content", err)
	}
	// Still accepted: an assistant turn that only called tools, a strict
	// tool without parameters, allowed_tools in mode auto.
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"ok"}],` + tool + `}`,
		`{"model":"m",` + msgs + `,"tools":[{"type":"function","function":{"name":"f","strict":true}}]}`,
		`{"model":"m",` + msgs + `,` + tool + `,"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"f"}}]}}}`,
	} {
		if _, err := parse(t, body).Normalize(); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

// response_format.json_schema.description was dropped: not stored (so not
// in the fingerprint), not sent. Found by review.
func TestResponseFormatDescriptionIsKept(t *testing.T) {
	in, err := parse(t, `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema",`+
		`"json_schema":{"name":"r","description":"a city","schema":{"type":"object"}}}}`).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if f := in.ProviderFormat(); f == nil || f.Description != "a city" {
		t.Fatalf("provider format %+v, want description %q", f, "a city")
	}
	b, _ := json.Marshal(in)
	if !strings.Contains(string(b), `"description":"a city"`) {
		t.Fatalf("stored %s without the description", b)
	}
}

// The parameters of a request's strict tools are compiled, each a caller's
// schema within contract's bounds; together they are held to the bounds too:
// each within them alone, fifty-eight tools cost one request 35 s of CPU.
// Found by review.
func TestStrictToolsAreBoundedTogether(t *testing.T) {
	anyOf := strings.Repeat(`{},`, 2499) + `{}`
	var tools []string
	for i := range 3 {
		tools = append(tools, `{"type":"function","function":{"name":"f`+strconv.Itoa(i)+`","strict":true,"parameters":`+
			`{"type":"object","properties":{"a":{"anyOf":[`+anyOf+`]}},"required":["a"],"additionalProperties":false}}}`)
	}
	body := func(n int) string {
		return `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + strings.Join(tools[:n], ",") + `]}`
	}
	if _, err := parse(t, body(2)).Normalize(); err != nil {
		t.Fatalf("two strict tools of 2,501 subschemas each (5,002 in all): %v", err)
	}
	_, err := parse(t, body(3)).Normalize()
	var re *RequestError
	if !errors.As(err, &re) || re.Param != "tools" || !strings.Contains(re.Message, "subschemas") {
		t.Fatalf("three strict tools of 2,501 subschemas each (7,503 in all, the bound 6,000): %v; want a 400 on tools naming the subschemas", err)
	}
}
