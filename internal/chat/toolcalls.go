package chat

import (
	"bytes"
	"encoding/json"
	"strings"
)

// normalizeToolCalls gives every tool call of an answer judgeToolCalls
// accepted the shape OpenAI's own answers have and the SDKs rely on:
// `"type": "function"` (the only kind of tool the router accepts) and
// `function.arguments` as a string, "{}" when the provider sent none or an
// empty one (go-openai drops an empty arguments string; a call of a function
// without parameters may come without it). openai-node's stream helper
// throws on a call without a type, and JSON.parse of a missing or empty
// arguments string throws in any client. A call that already has both is
// kept byte for byte, and so is the whole array when no call changes.
func normalizeToolCalls(raw json.RawMessage) json.RawMessage {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return raw // judgeToolCalls has refused it already
	}
	changed := false
	for i, call := range list {
		if fixed, ok := normalizeToolCall(call); ok {
			list[i], changed = fixed, true
		}
	}
	if !changed {
		return raw
	}
	out, err := json.Marshal(list)
	if err != nil {
		return raw
	}
	return out
}

// normalizeToolCall is call with its type and arguments filled in, and
// whether anything had to be.
func normalizeToolCall(call json.RawMessage) (json.RawMessage, bool) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(call, &members); err != nil {
		return nil, false
	}
	changed := false
	if t, ok := members["type"]; !ok || isEmptyJSON(t) {
		members["type"], changed = json.RawMessage(`"function"`), true
	}
	var fn map[string]json.RawMessage
	if err := json.Unmarshal(members["function"], &fn); err != nil || fn == nil {
		return nil, false // judgeToolCalls has refused a call without a function
	}
	if a, ok := fn["arguments"]; !ok || isEmptyJSON(a) || blankString(a) {
		fn["arguments"] = json.RawMessage(`"{}"`)
		b, err := json.Marshal(fn)
		if err != nil {
			return nil, false
		}
		members["function"], changed = b, true
	}
	if !changed {
		return nil, false
	}
	b, err := json.Marshal(members)
	if err != nil {
		return nil, false
	}
	return b, true
}

// blankString reports a JSON string of white space only (or none): arguments
// that hold nothing, as "" does.
func blankString(v json.RawMessage) bool {
	var s string
	return json.Unmarshal(v, &s) == nil && strings.TrimSpace(s) == ""
}

// isEmptyJSON reports a member that holds nothing: null or "".
func isEmptyJSON(v json.RawMessage) bool {
	s := string(bytes.TrimSpace(v))
	return s == "null" || s == `""` || s == ""
}
