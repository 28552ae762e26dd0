package providers

import (
	"bytes"
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
)

// toolCall is one tool call of an OpenAI-compatible answer as the adapter
// returns it: go-openai's ToolCall (index, id, type, function) and the
// provider's extra_content, which go-openai's type has no member for.
// Gemini's OpenAI compatibility layer sends each call's thought signature
// there (extra_content.google.thought_signature) and refuses (HTTP 400) a
// next turn whose assistant tool call does not send it back: the caller must
// get it as the provider sent it. A call without one encodes exactly as
// go-openai's ToolCall does (omitempty).
type toolCall struct {
	openai.ToolCall
	ExtraContent json.RawMessage `json:"extra_content,omitempty"`
}

// maxExtraContent bounds the extra_content the adapter keeps of one tool
// call (a thought signature is a few KiB at most): a larger one is dropped,
// so a provider cannot make the router hold without end what it repeats.
const maxExtraContent = 64 << 10

// extraContent is raw, a tool call's extra_content, as the adapter keeps it:
// nil when absent, null, or larger than maxExtraContent.
func extraContent(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || len(raw) > maxExtraContent || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	return bytes.Clone(raw)
}

// hasExtraContent reports whether raw, a chunk or an answer body, may hold a
// tool call's extra_content: only then is it decoded a second time for it
// (the decode of every other chunk stays as it was).
func hasExtraContent(raw []byte) bool {
	return bytes.Contains(raw, []byte(`"extra_content"`))
}

// extraToolCalls is the extra_content of each tool call in a list, by its
// position, decoded from the same JSON go-openai decoded the list from.
type extraToolCalls []struct {
	ExtraContent json.RawMessage `json:"extra_content"`
}

// extras is each call's kept extra_content (extraContent), by position; nil
// when none has one.
func (x extraToolCalls) extras() []json.RawMessage {
	var out []json.RawMessage
	for i, c := range x {
		if e := extraContent(c.ExtraContent); e != nil {
			if out == nil {
				out = make([]json.RawMessage, len(x))
			}
			out[i] = e
		}
	}
	return out
}

// answerToolCallExtras is the extra_content of each tool call of choice 0's
// message in body, a non-streamed answer (chat.completion) whose choice 0 is
// at position k of its choices (firstChoice), by the call's
// position in message.tool_calls; nil when there is none (or body does not
// decode: go-openai's decode of it decided already).
func answerToolCallExtras(body []byte, k int) []json.RawMessage {
	if !hasExtraContent(body) {
		return nil
	}
	var v struct {
		Choices []struct {
			Message struct {
				ToolCalls extraToolCalls `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &v) != nil || k >= len(v.Choices) {
		return nil
	}
	return v.Choices[k].Message.ToolCalls.extras()
}

// withExtras pairs calls with the extra_content at the same position of
// extras (which may be shorter, or nil).
func withExtras(calls []openai.ToolCall, extras []json.RawMessage) []toolCall {
	out := make([]toolCall, len(calls))
	for i, c := range calls {
		out[i].ToolCall = c
		if i < len(extras) {
			out[i].ExtraContent = extras[i]
		}
	}
	return out
}
