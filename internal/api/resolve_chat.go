package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/jsontext"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// chatAnswer is a chat job's "succeeded" result read as the answer the
// provider gave: its content, its reasoning (DeepSeek's reasoning_content,
// passed on as a live answer's is) and its tool calls (nil: none).
// message says the result was read as the assistant message.
type chatAnswer struct {
	content, reasoning string
	toolCalls          json.RawMessage
	message            bool
}

// assistantMessageShape is the result a tool-call answer is resolved with,
// for the messages that ask for it.
const assistantMessageShape = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_…","type":"function","function":{"name":"…","arguments":"{…}"}}]}`

// assistantMessageMembers are the members of an assistant message that a
// resolution records; any other must be null or empty (OpenAI's message
// carries "refusal": null and "annotations": []).
var assistantMessageMembers = []string{"role", "content", "tool_calls", "reasoning_content"}

// judgeChatResolution is judgeResolution for a chat job: the result is judged
// as a live answer is (chat.Judge), and the completion made from it is what
// every replay returns. A string is the assistant's content; so is any other
// JSON (the object a response_format asks for, as its JSON text), except that
// when the request offered tools an object with a tool_calls member or with
// "role": "assistant" is the assistant message (readChatResult): its calls
// make the answer end with finish_reason "tool_calls", carrying them as a
// live tool-call answer does.
func judgeChatResolution(job *store.Job, a *store.Attempt, result json.RawMessage) (doc json.RawMessage, usage any, violations []contract.Violation, err error) {
	var in chat.Input
	if err := json.Unmarshal(job.Input, &in); err != nil {
		return nil, nil, nil, fmt.Errorf("the stored chat request does not decode: %w", err)
	}
	in.SetOwner(job.Owner) // its schemas are compiled through the owner's cache
	v, err := in.Validator()
	if err != nil {
		return nil, nil, nil, err
	}
	ans, bad := readChatResult(&in, result)
	if bad != nil {
		return nil, nil, []contract.Violation{*bad}, nil
	}
	if ans.toolCalls == nil && in.RequiresToolCall() {
		// Judge's own words blame the provider for an answer without a
		// call; here it is the result sent that holds none.
		return nil, nil, []contract.Violation{{Rule: "tool_calls", Path: "$.tool_calls", Message: fmt.Sprintf(
			"the request's tool_choice %s requires a tool call and the result holds none: send the assistant message with the calls the provider returned, %s, "+
				`or resolve the attempt as "failed" if the provider made no call`, cutChoice(in.ToolChoice), assistantMessageShape)}}, nil
	}
	finish := "stop"
	if ans.toolCalls != nil {
		finish = "tool_calls"
	}
	u, raised := resolvedUsage(job, a, []string{ans.reasoning, ans.content, string(ans.toolCalls)}, func() []providers.Message {
		return tokens.Counted(in.Messages, in.ProviderFormat(), "", in.Tools)
	})
	doc, violations = chat.Judge(&in, v, job.ID, &providers.Response{Content: ans.content, ReasoningContent: ans.reasoning, ToolCalls: ans.toolCalls,
		Model: a.Model, Created: time.Now(), FinishReason: finish, Usage: u})
	if ans.message {
		for i, vl := range violations {
			if vl.Rule == "tool_calls" || vl.Rule == "tool_arguments" {
				violations[i].Message += `; the result's tool_calls must be the calls the provider returned, each {"id":"call_…","type":"function","function":{"name":"…","arguments":"{…}"}} ` +
					`(arguments a JSON object written as a string) calling a function the request offered and its tool_choice allows; ` +
					`if the provider's answer broke the request's contract, resolve the attempt as "failed"`
			}
		}
	}
	if raised {
		usage = u
	}
	return doc, usage, violations, nil
}

// readChatResult reads a chat job's "succeeded" result. A JSON string is the
// assistant's content, and so is any other JSON as its text (the object a
// response_format asks for), as before tool calls could be resolved. When
// the request offered tools, an object with a tool_calls member, or with
// "role": "assistant", is the assistant message instead, as the provider's
// answer shows it ({"role":"assistant","content":null,"tool_calls":[…]}, or
// {"tool_calls":[…]} alone): content a string or null, tool_calls the calls
// (null, [] or left out: none; Judge holds them to the request's tools),
// reasoning_content a string or null, and no other member that holds
// anything. A response_format object that has such members is sent as a
// string holding its JSON text. The violation, when not nil, says what in the
// message is wrong.
func readChatResult(in *chat.Input, result json.RawMessage) (chatAnswer, *contract.Violation) {
	var str string
	if json.Unmarshal(result, &str) == nil {
		return chatAnswer{content: str}, nil
	}
	var members map[string]json.RawMessage
	if len(in.Tools) == 0 || json.Unmarshal(result, &members) != nil || !assistantMessage(members) {
		return chatAnswer{content: string(result)}, nil
	}
	refuse := func(member, format string, args ...any) (chatAnswer, *contract.Violation) {
		return chatAnswer{}, &contract.Violation{Rule: "assistant_message", Path: "$." + member, Message: fmt.Sprintf(format, args...)}
	}
	ans := chatAnswer{message: true}
	if raw, ok := members["role"]; ok && !jsonNull(raw) {
		if role, _ := jsonString(raw); role != "assistant" {
			return refuse("role", `the result's role is %s; a tool-call answer is the assistant's message: send "role":"assistant", or leave role out`, cutJSON(raw))
		}
	}
	var ok bool
	if raw := members["content"]; !jsonNull(raw) {
		if ans.content, ok = jsonString(raw); !ok {
			return refuse("content", "the result's content is %s; send it as a string (the assistant's text; a response_format answer as its JSON text), or null for an answer of tool calls alone", cutJSON(raw))
		}
	}
	if raw := members["reasoning_content"]; !jsonNull(raw) {
		if ans.reasoning, ok = jsonString(raw); !ok {
			return refuse("reasoning_content", "the result's reasoning_content is %s; send it as a string (the model's reasoning as the provider returned it), or leave it out", cutJSON(raw))
		}
	}
	if raw := members["tool_calls"]; !jsonNull(raw) && !emptyArray(raw) {
		ans.toolCalls = raw
	}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(assistantMessageMembers, name) && !emptyJSON(members[name]) {
			return refuse(name, "the result's member %s is not part of an answer the router records (an assistant message's role, content, tool_calls and reasoning_content): leave it out",
				strconv.Quote(jsontext.SanitizeString(cutString(name, 60))))
		}
	}
	return ans, nil
}

// assistantMessage reports whether an object result of a request that
// offered tools is the assistant message: it has a tool_calls member, or
// "role": "assistant".
func assistantMessage(members map[string]json.RawMessage) bool {
	if _, ok := members["tool_calls"]; ok {
		return true
	}
	role, _ := jsonString(members["role"])
	return role == "assistant"
}

// jsonString is raw as a JSON string, and whether it is one.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	return s, json.Unmarshal(raw, &s) == nil
}

// emptyArray reports a JSON array with no element.
func emptyArray(raw json.RawMessage) bool {
	var list []json.RawMessage
	return len(raw) > 0 && raw[0] == '[' && json.Unmarshal(raw, &list) == nil && len(list) == 0
}

// jsonNull reports a member left out or null.
func jsonNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// emptyJSON reports a member that holds nothing: null, "", [] or {}.
func emptyJSON(raw json.RawMessage) bool {
	if jsonNull(raw) {
		return true
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// cutJSON is raw for a message: its first 80 bytes, valid UTF-8.
func cutJSON(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 80 {
		s = cutString(s, 80) + "…"
	}
	return jsontext.SanitizeString(s)
}

// cutChoice is a request's tool_choice for a message ("required", or the
// object's first 200 bytes).
func cutChoice(choice json.RawMessage) string {
	s := string(choice)
	if len(s) > 200 {
		s = cutString(s, 200) + "…"
	}
	return jsontext.SanitizeString(s)
}

// cutString is s's first n bytes at most.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
