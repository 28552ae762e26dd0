package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	openai "github.com/sashabaranov/go-openai"
)

// The tools and the tool calls of the history are checked here as the
// OpenAI adapter decodes them into go-openai's types before sending
// (providers' chatRequest), and as the Anthropic adapter sends a call's
// arguments: a request an adapter would refuse on every attempt is refused
// with a 400 naming the field before anything is stored, so that a corrected
// retry with the same Idempotency-Key runs normally (SPEC §4.4). The request
// keeps the caller's own JSON; only its shape is checked.

// historyToolCalls checks the tool_calls of messages[i] (raw, present): an
// array of calls, each with an id, type "function", a function name, and
// arguments that are a string holding JSON (or blank) when given, as OpenAI
// takes them and the Anthropic adapter sends them. It appends the calls' ids
// to ids, and returns the tool_calls to keep: nil for an empty array, which
// OpenAI refuses (400 empty_array) and the SDKs' parse() helpers sent back as
// history, and which means no calls.
//
// Agents resend their whole history on every turn: scanToolCalls reads the
// calls once, allocating only their ids. What it does not accept is decoded
// by slowToolCalls, which decides, and names the field when it refuses.
func historyToolCalls(i int, raw json.RawMessage, ids []string) ([]string, json.RawMessage, error) {
	n := len(ids)
	ids, ok := scanToolCalls(raw, ids)
	if !ok {
		var err error
		if ids, err = slowToolCalls(i, raw, ids[:n]); err != nil {
			return ids[:n], nil, err
		}
	}
	if len(ids) == n {
		return ids, nil, nil
	}
	return ids, raw, nil
}

// slowToolCalls decodes the tool_calls of messages[i] into go-openai's
// ToolCall, as the OpenAI adapter does, checks each call, and appends their
// ids to ids; it refuses the first call, and member, that does not decode or
// fails a check, naming it.
func slowToolCalls(i int, raw json.RawMessage, ids []string) ([]string, error) {
	param := fmt.Sprintf("messages[%d].tool_calls", i)
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return ids, &RequestError{Param: param, Message: fmt.Sprintf(
			`%s must be an array of tool calls such as [{"id":"call_1","type":"function","function":{"name":"...","arguments":"{}"}}]; it is %s`,
			param, rawKind(raw))}
	}
	for j, item := range list {
		at := fmt.Sprintf("%s[%d]", param, j)
		var call openai.ToolCall
		if err := decodeShape(at, item, &call); err != nil {
			return ids, err
		}
		var args struct {
			Function struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		_ = json.Unmarshal(item, &args) // decodeShape has checked it is an object
		switch {
		case call.ID == "":
			return ids, &RequestError{Param: at + ".id", Message: fmt.Sprintf(
				"%s.id is required: the id of the call, which the tool message answering it names in tool_call_id", at)}
		case call.Type != openai.ToolTypeFunction:
			return ids, &RequestError{Param: at + ".type", Message: fmt.Sprintf(
				`%s.type is %s: it must be "function" (the router supports only function tools)`, at, typeOf(anyType(string(call.Type))))}
		case call.Function.Name == "":
			return ids, &RequestError{Param: at + ".function.name", Message: fmt.Sprintf(
				"%s.function.name is required: the name of the function the call called", at)}
		case !validCallName(call.Function.Name):
			// OpenAI refuses it, as it refuses such a tool's name.
			return ids, &RequestError{Param: at + ".function.name", Message: fmt.Sprintf(
				"%s.function.name %q is not letters, digits, underscores or dashes (OpenAI refuses any other function name): "+
					"name the function the call called as tools names it, for example %q", at, cut(call.Function.Name, 64), nameFrom(call.Function.Name, "function"))}
		case string(args.Function.Arguments) == "null":
			return ids, &RequestError{Param: at + ".function.arguments", Message: fmt.Sprintf(
				`%s.function.arguments must be a string holding the arguments as JSON, such as "{\"city\":\"Paris\"}", not null`, at)}
		case !validArguments([]byte(call.Function.Arguments)):
			// The Anthropic adapter sends them as the tool_use's input, and
			// refuses them on every attempt when they are not JSON.
			return ids, &RequestError{Param: at + ".function.arguments", Message: fmt.Sprintf(
				`%s.function.arguments is not JSON: it must be a string holding the arguments as JSON, such as "{\"city\":\"Paris\"}" (or "" for none)`, at)}
		}
		ids = append(ids, call.ID)
	}
	return ids, nil
}

// toolShape is a tool as go-openai's Tool decodes it, with the function's
// parameters kept as JSON: only their kind is checked here (compileToolContract
// compiles a strict tool's).
type toolShape struct {
	Type     openai.ToolType `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Strict      bool            `json:"strict"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// checkToolShapes decodes each tool of tools (an array of function tools, as
// Normalize has checked) as go-openai's Tool decodes, and checks that a
// function's parameters, when given, are a JSON Schema object.
func checkToolShapes(tools json.RawMessage) error {
	var list []json.RawMessage
	if err := json.Unmarshal(tools, &list); err != nil {
		return &RequestError{Param: "tools", Message: "tools must be a non-empty array of tool definitions"}
	}
	for i, item := range list {
		var tool toolShape
		if err := json.Unmarshal(item, &tool); err != nil {
			if err := decodeShape(fmt.Sprintf("tools[%d]", i), item, &tool); err != nil {
				return err
			}
		}
		if tool.Function == nil {
			continue
		}
		if p := tool.Function.Parameters; present(p) && jsonKind(string(bytes.TrimSpace(p))) != "" {
			at := fmt.Sprintf("tools[%d]", i)
			return &RequestError{Param: at + ".function.parameters", Message: fmt.Sprintf(
				`%s.function.parameters must be a JSON Schema object, such as {"type":"object","properties":{...}}; it is %s`,
				at, rawKind(p))}
		}
	}
	return nil
}

// decodeShape decodes item, the value at path at, into v, one of go-openai's
// types, and names the member of the wrong type when it cannot.
func decodeShape(at string, item json.RawMessage, v any) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(item, &obj); err != nil || obj == nil {
		return &RequestError{Param: at, Message: fmt.Sprintf("%s must be an object; it is %s", at, rawKind(item))}
	}
	err := json.Unmarshal(item, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		param := at + "." + te.Field
		return &RequestError{Param: param, Message: fmt.Sprintf("%s must be %s; it is %s", param, goKind(te.Type), valueKind(te.Value))}
	}
	return &RequestError{Param: at, Message: fmt.Sprintf("%s: %v", at, err)}
}

// goKind names the JSON a Go type decodes from.
func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "of another type"
}

// valueKind names the JSON an UnmarshalTypeError's Value describes ("number
// 5" is a number).
func valueKind(v string) string {
	switch {
	case v == "object", v == "array":
		return "an " + v
	case v == "bool":
		return "a boolean"
	case len(v) >= 6 && v[:6] == "number":
		return "a number"
	}
	return "a " + v
}

// rawKind names the JSON value raw is, for an error message.
func rawKind(raw json.RawMessage) string {
	if k := jsonKind(string(bytes.TrimSpace(raw))); k != "" {
		return k
	}
	return "a JSON object"
}

// toolTurn holds the calls of the message at msg (an assistant's) while the
// tool messages right after it answer them: answeredBy[j] is the index of the
// tool message that answered ids[j], or -1.
type toolTurn struct {
	msg        int
	ids        []string
	answeredBy []int
}

// calls checks the tool_calls of messages[i] (an assistant's, raw, present),
// and returns them to keep; when they hold calls, they begin a turn. The turn
// before has ended.
func (t *toolTurn) calls(i int, raw json.RawMessage) (json.RawMessage, error) {
	ids, kept, err := historyToolCalls(i, raw, t.ids[:0])
	if err != nil || kept == nil {
		return kept, err
	}
	if err := uniqueCallIDs(i, ids); err != nil {
		return nil, err
	}
	t.msg, t.ids, t.answeredBy = i, ids, t.answeredBy[:0]
	for range ids {
		t.answeredBy = append(t.answeredBy, -1)
	}
	return kept, nil
}

// uniqueCallIDs refuses a call id that ids, the calls of messages[i], hold
// twice, naming the second call: Anthropic refuses two tool_use blocks of one
// id, and a tool message could not say which of the two it answers.
func uniqueCallIDs(i int, ids []string) error {
	dup := func(first, j int) error {
		return &RequestError{Param: fmt.Sprintf("messages[%d].tool_calls[%d].id", i, j), Message: fmt.Sprintf(
			"messages[%d].tool_calls[%d].id %q is also the id of messages[%d].tool_calls[%d]: each call of an assistant message needs its own id, "+
				"which the tool message answering it names in tool_call_id (Anthropic refuses the history otherwise)", i, j, cut(ids[j], 60), i, first)}
	}
	if len(ids) <= 16 { // the usual turn: no allocation
		for j := 1; j < len(ids); j++ {
			for k := range j {
				if ids[k] == ids[j] {
					return dup(k, j)
				}
			}
		}
		return nil
	}
	seen := make(map[string]int, len(ids))
	for j, id := range ids {
		if k, ok := seen[id]; ok {
			return dup(k, j)
		}
		seen[id] = j
	}
	return nil
}

// answer notes messages[i], a tool message, answering id. It refuses an id
// that no call of the turn has, and one whose call an earlier tool message
// answered, naming messages[i].tool_call_id: OpenAI and Anthropic refuse the
// history either way (OpenAI: "Duplicate value for 'tool_call_id'";
// Anthropic: "each tool_use must have a single result"), so stored it would
// be a job that fails with the provider's 400.
func (t *toolTurn) answer(i int, id string) error {
	for j, c := range t.ids {
		if c != id {
			continue
		}
		// uniqueCallIDs has refused two calls of one id: this is the call.
		if k := t.answeredBy[j]; k >= 0 {
			return &RequestError{Param: fmt.Sprintf("messages[%d].tool_call_id", i), Message: fmt.Sprintf(
				"tool_call_id %q is already answered by messages[%d]: each call of an assistant message's tool_calls is answered by exactly one tool message "+
					"(OpenAI and Anthropic refuse the history otherwise); drop one of the two, keeping the tool's result", cut(id, 60), k)}
		}
		t.answeredBy[j] = i
		return nil
	}
	// OpenAI refuses it ("must be a response to a preceding message with
	// 'tool_calls'"), as Anthropic refuses a tool_result without its
	// tool_use.
	return &RequestError{Param: fmt.Sprintf("messages[%d].tool_call_id", i), Message: fmt.Sprintf(
		"tool_call_id %q answers no tool call of the assistant message before it: "+
			"tool messages follow, right after it, the assistant message whose tool_calls hold a call with their id", cut(id, 60))}
}

// end closes the turn at a message that is not a tool message, or at the end
// of the history: a call no tool message answered is refused, naming it.
func (t *toolTurn) end() error {
	for j, k := range t.answeredBy {
		if k < 0 {
			param := fmt.Sprintf("messages[%d].tool_calls[%d].id", t.msg, j)
			return &RequestError{Param: param, Message: fmt.Sprintf(
				"no tool message answers call %q of messages[%d]: each call of an assistant message's tool_calls is answered by a tool message "+
					"with its id in tool_call_id, right after that assistant message and before any other message (OpenAI and Anthropic refuse the history otherwise)",
				cut(t.ids[j], 60), t.msg)}
		}
	}
	t.ids, t.answeredBy = t.ids[:0], t.answeredBy[:0]
	return nil
}
