package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	openai "github.com/sashabaranov/go-openai"
)

// The tools and the tool calls of the history are decoded here into
// go-openai's types, as the OpenAI adapter decodes them before sending
// (providers' chatRequest): a request the adapter would refuse on every
// attempt is refused with a 400 naming the field before anything is stored,
// so that a corrected retry with the same Idempotency-Key runs normally
// (SPEC §4.4). The request keeps the caller's own JSON; only its shape is
// checked.

// historyToolCalls checks the tool_calls of messages[i] (raw, present): an
// array of calls, each with an id, type "function", a function name, and
// arguments that are a string (the JSON of the arguments) when given, as
// OpenAI takes them. It returns the calls' ids, and the tool_calls to keep:
// nil for an empty array, which OpenAI refuses (400 empty_array) and the
// SDKs' parse() helpers sent back as history, and which means no calls.
func historyToolCalls(i int, raw json.RawMessage) ([]string, json.RawMessage, error) {
	param := fmt.Sprintf("messages[%d].tool_calls", i)
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, nil, &RequestError{Param: param, Message: fmt.Sprintf(
			`%s must be an array of tool calls such as [{"id":"call_1","type":"function","function":{"name":"...","arguments":"{}"}}]; it is %s`,
			param, rawKind(raw))}
	}
	if len(list) == 0 {
		return nil, nil, nil
	}
	ids := make([]string, 0, len(list))
	for j, item := range list {
		at := fmt.Sprintf("%s[%d]", param, j)
		var call openai.ToolCall
		if err := decodeShape(at, item, &call); err != nil {
			return nil, nil, err
		}
		var args struct {
			Function struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		_ = json.Unmarshal(item, &args) // decodeShape has checked it is an object
		switch {
		case call.ID == "":
			return nil, nil, &RequestError{Param: at + ".id", Message: fmt.Sprintf(
				"%s.id is required: the id of the call, which the tool message answering it names in tool_call_id", at)}
		case call.Type != openai.ToolTypeFunction:
			return nil, nil, &RequestError{Param: at + ".type", Message: fmt.Sprintf(
				`%s.type is %s: it must be "function" (the router supports only function tools)`, at, typeOf(anyType(string(call.Type))))}
		case call.Function.Name == "":
			return nil, nil, &RequestError{Param: at + ".function.name", Message: fmt.Sprintf(
				"%s.function.name is required: the name of the function the call called", at)}
		case string(args.Function.Arguments) == "null":
			return nil, nil, &RequestError{Param: at + ".function.arguments", Message: fmt.Sprintf(
				`%s.function.arguments must be a string holding the arguments as JSON, such as "{\"city\":\"Paris\"}", not null`, at)}
		}
		ids = append(ids, call.ID)
	}
	return ids, raw, nil
}

// checkToolShapes decodes each tool of tools (an array of function tools, as
// Normalize has checked) into go-openai's Tool, and checks that a function's
// parameters, when given, are a JSON Schema object.
func checkToolShapes(tools json.RawMessage) error {
	var list []json.RawMessage
	if err := json.Unmarshal(tools, &list); err != nil {
		return &RequestError{Param: "tools", Message: "tools must be a non-empty array of tool definitions"}
	}
	for i, item := range list {
		at := fmt.Sprintf("tools[%d]", i)
		var tool openai.Tool
		if err := decodeShape(at, item, &tool); err != nil {
			return err
		}
		var fn struct {
			Function struct {
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		_ = json.Unmarshal(item, &fn)
		if p := fn.Function.Parameters; present(p) && jsonKind(string(bytes.TrimSpace(p))) != "" {
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
