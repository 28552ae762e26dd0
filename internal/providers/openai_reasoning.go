package providers

import (
	"bytes"
	"encoding/json"
)

// Newer vLLM releases and OpenRouter send the model's reasoning as
// message.reasoning (streamed: delta.reasoning) rather than
// reasoning_content, and go-openai decodes only the latter. The router reads
// it from the answer's bytes and keeps it as reasoning_content
// (Response.ReasoningContent); an answer that has both is taken by its
// reasoning_content, which such servers send with the same text.

// hasReasoningString reports whether raw may hold a member "reasoning" whose
// value is a string: the name, then JSON whitespace, a colon, JSON whitespace
// and a quote. A provider that sends "reasoning": null on every chunk
// (OpenRouter) costs no second decode; text that merely mentions the word is
// escaped (\"reasoning\") and does not match.
func hasReasoningString(raw []byte) bool {
	const name = `"reasoning"`
	for {
		i := bytes.Index(raw, []byte(name))
		if i < 0 {
			return false
		}
		raw = raw[i+len(name):]
		rest := bytes.TrimLeft(raw, " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		if rest = bytes.TrimLeft(rest[1:], " \t\r\n"); len(rest) > 0 && rest[0] == '"' {
			return true
		}
	}
}

// reasoningString is v, a JSON value, when it is a string ("" otherwise: an
// object or null is not reasoning text the router can pass on).
func reasoningString(v json.RawMessage) string {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// answerReasoning is choice 0's message.reasoning in body, a non-streamed
// answer (chat.completion), whose choice 0 is at position k of its choices
// (firstChoice); "" when it has none (or body does not decode:
// go-openai's decode of it decided already).
func answerReasoning(body []byte, k int) string {
	if !hasReasoningString(body) {
		return ""
	}
	var v struct {
		Choices []struct {
			Message struct {
				Reasoning json.RawMessage `json:"reasoning"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &v) != nil || k >= len(v.Choices) {
		return ""
	}
	return reasoningString(v.Choices[k].Message.Reasoning)
}

// chunkReasoning is the delta.reasoning of raw's choices of index 0, a
// stream chunk decoded already (decodeStreamChunk), joined; "" for a chunk
// without one. Only a chunk whose bytes name it with a string value is
// decoded again (hasReasoningString), so the stream's per-chunk cost stays
// decodeChunk's.
func chunkReasoning(raw []byte) string {
	if !hasReasoningString(raw) {
		return ""
	}
	var v struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Reasoning json.RawMessage `json:"reasoning"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var s string
	for _, c := range v.Choices {
		if c.Index == 0 {
			s += reasoningString(c.Delta.Reasoning)
		}
	}
	return s
}
