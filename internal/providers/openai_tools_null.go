package providers

import (
	"bytes"
	"encoding/json"
)

// withoutNullParameters is tools, as the caller sent them, less a function's
// `"parameters": null`: go-openai's FunctionDefinition has no omitempty on
// Parameters, so every go-openai caller that defines a tool without
// parameters sends null, which OpenAI answers 400 invalid_function_parameters
// ("None is not of type 'object'") and Mistral refuses too — the caller's
// fault, not failed over, for a tool the router reads as having none (as the
// Anthropic adapter sends it). Tools without such a member are sent as they
// are, byte for byte; with one, each tool keeps its members, the function
// object re-encoded without that one.
func withoutNullParameters(tools json.RawMessage) json.RawMessage {
	if !bytes.Contains(tools, []byte("null")) {
		return tools
	}
	var list []json.RawMessage
	if json.Unmarshal(tools, &list) != nil {
		return tools
	}
	changed := false
	for i, item := range list {
		var tool map[string]json.RawMessage
		if json.Unmarshal(item, &tool) != nil {
			continue
		}
		var fn map[string]json.RawMessage
		if json.Unmarshal(tool["function"], &fn) != nil || fn == nil {
			continue
		}
		if p, ok := fn["parameters"]; !ok || string(bytes.TrimSpace(p)) != "null" {
			continue
		}
		delete(fn, "parameters")
		b, err := json.Marshal(fn)
		if err != nil {
			continue
		}
		tool["function"] = b
		if b, err = json.Marshal(tool); err != nil {
			continue
		}
		list[i], changed = b, true
	}
	if !changed {
		return tools
	}
	b, err := json.Marshal(list)
	if err != nil {
		return tools
	}
	return b
}
