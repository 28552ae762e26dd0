package providers

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// CompleteFinishReason reports whether an answer that ended with this
// finish_reason is whole: the model stopped by itself or at a stop sequence
// (stop), at the token limit (length), or to call tools (tool_calls, and the
// deprecated function_call). "" is an unstreamed answer that named none, as
// some OpenAI-compatible servers send, taken as stop (chat.Judge says so); a
// stream always names one (an adapter fails one that ends without it).
//
// Any other reason says the answer is not whole: "error" (OpenRouter,
// Mistral, LiteLLM: the generation broke off upstream after tokens were
// sent), "abort" (vLLM), DeepSeek's "insufficient_system_resource", a
// content_filter (which the OpenAI adapter reports as content_policy), or a
// reason the router does not know. Such an answer must not win: its text is
// what came before the break. Both adapters map the finish reasons they
// return onto this list (the Anthropic adapter maps its stop reasons), and
// chat.Judge refuses any other as a second line of defence.
func CompleteFinishReason(reason string) bool {
	switch reason {
	case "", "stop", "length", "tool_calls", "function_call":
		return true
	}
	return false
}

// brokenOff is the failure of an answer whose finish reason says it is not
// whole (see CompleteFinishReason): a known outcome (the provider answered)
// that fails over, with the usage the provider billed for what it generated.
// A stream is stream_cut (the provider broke it off, in words); an unstreamed
// answer is malformed_response, as one without a stop reason is. Code is the
// finish reason, so the attempt says which.
func brokenOff(provider, field, reason string, streamed bool, u Usage, id, model string) *Error {
	kind := KindMalformedResponse
	if streamed {
		kind = KindStreamCut
	}
	said := fmt.Sprintf("with %s %q", field, truncateTo(reason, maxCode))
	if reason == "" {
		said = "without a " + field
	}
	e := NewError(provider, kind, "the provider ended the answer "+said+
		", which does not say it is complete (the generation broke off or was aborted): the answer is discarded")
	e.Code = truncateTo(reason, maxCode)
	return e.billed(u, id, model)
}

// incompleteToolCall returns the index of the first of n tool calls (the
// i-th has the id and function name call(i) gives) that has no id or no
// function name, or -1. Such a call cannot be run or answered (a tool message
// names the call's id): a stream whose tool-call deltas skipped an index (0,
// then 5) left calls 1 to 4 with neither.
func incompleteToolCall(n int, call func(i int) (id, name string)) int {
	for i := range n {
		if id, name := call(i); id == "" || name == "" {
			return i
		}
	}
	return -1
}

// malformedToolCall is the failure of an answer whose tool call i has no id
// or no function name: the provider's fault, a known outcome with the usage
// it billed, failed over.
func malformedToolCall(provider string, i int, streamed bool, u Usage, id, model string) *Error {
	kind := KindMalformedResponse
	if streamed {
		kind = KindStreamMalformed
	}
	e := NewError(provider, kind, fmt.Sprintf("tool call %d has no id or no function name: the answer cannot be used", i))
	return e.billed(u, id, model)
}

// wholeFinishReason maps the end-of-sequence reasons some OpenAI-compatible
// servers send instead of "stop" (Hugging Face TGI's "eos_token", older
// Together and vLLM builds' "eos") onto "stop": the model stopped by itself,
// and callers' SDKs know "stop" only.
//
// Likewise the other whole endings some servers and gateways pass through
// under their own names: TGI's "stop_sequence" and "end_turn" (an Anthropic
// stop reason, passed through by some OpenRouter and Bedrock gateways) are
// "stop"; Mistral's "model_length" (the context window was reached) and
// "max_tokens" (passed through the same way) are "length"; Anthropic's
// "tool_use" (Claude calling a tool, passed through the same way) is
// "tool_calls", and judged as it is (an answer without a call is refused).
// The words are compared without case: gateways in front of Gemini pass its
// own "STOP" and "MAX_TOKENS" through. Any other word is returned as it came
// (CompleteFinishReason refuses it, and its error names it).
func wholeFinishReason(reason string) string {
	switch strings.ToLower(reason) {
	case "stop", "eos", "eos_token", "stop_sequence", "end_turn":
		return "stop"
	case "length", "model_length", "max_tokens":
		return "length"
	case "tool_calls", "tool_use":
		return "tool_calls"
	case "function_call":
		return "function_call"
	}
	return reason
}

// filteredFinishReason reports whether a finish reason says the provider
// withheld the output: OpenAI's "content_filter", or Gemini's blocking
// reasons as gateways pass them through ("SAFETY", "PROHIBITED_CONTENT",
// "RECITATION", "BLOCKLIST", "SPII"), compared without case. Such an answer
// is the provider's refusal (content_policy), not a broken-off one.
func filteredFinishReason(reason string) bool {
	switch strings.ToLower(reason) {
	case "content_filter", "safety", "prohibited_content", "recitation", "blocklist", "spii":
		return true
	}
	return false
}

// nameToolCalls gives an id to each tool call that names its function but
// has no id, as Gemini's OpenAI-compatible API sends them: the caller must
// answer each call with a tool message that names its id, and ids need only be
// unique within the conversation. A call with neither id nor name (a
// stream's tool-call indexes skipped a number) is left for
// incompleteToolCall to refuse. A call whose id an earlier call of the
// answer has (uniqueToolCallIDs) gets a fresh id too. Only ids change: each
// call keeps its extra_content (toolCall).
func nameToolCalls(calls []toolCall) {
	for i := range calls {
		if calls[i].ID == "" && calls[i].Function.Name != "" {
			calls[i].ID = freshToolCallID()
		}
	}
	uniqueToolCallIDs(len(calls), func(i int) *string { return &calls[i].ID })
}

// freshToolCallID is an id of the router's for a tool call whose provider
// gave it none, or one an earlier call of the answer has.
func freshToolCallID() string { return "call_" + rand.Text() }

// uniqueToolCallIDs gives a fresh id to each of n tool calls (id(i) points
// at the i-th's id) whose id an earlier call of the answer has: some
// providers (DeepSeek, Zhipu's GLM, Kimi) reuse one id for parallel calls.
// Relayed as they are, the caller could not say which call a tool message
// answers, and chat.Normalize refuses the assistant message when the caller
// sends it back, so the conversation could not go on through the router. The
// first call keeps the id; an empty id is left for incompleteToolCall.
func uniqueToolCallIDs(n int, id func(i int) *string) {
	if n > 16 { // an answer's calls are not bounded: no quadratic scan
		seen := make(map[string]bool, n)
		for i := range n {
			p := id(i)
			if *p != "" && seen[*p] {
				*p = freshToolCallID()
			}
			seen[*p] = true
		}
		return
	}
	for j := 1; j < n; j++ {
		p := id(j)
		if *p == "" {
			continue
		}
		for k := range j {
			if *id(k) == *p {
				*p = freshToolCallID()
				break
			}
		}
	}
}
