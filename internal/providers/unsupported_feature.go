package providers

import "strings"

// featureUnsupported reports a 400 that says this target cannot take a
// feature of the request — tools, a JSON schema, thinking — rather than that
// the request is wrong: another target of the route may take it. A short,
// conservative list of the servers' own words:
//
//   - Ollama: "registry.ollama.ai/library/gemma:2b does not support tools",
//     "… does not support thinking";
//   - vLLM started without tool parsing: "\"auto\" tool choice requires
//     --enable-auto-tool-choice and --tool-call-parser to be set"; older vLLM
//     (through 0.7): "tool_choice = \"required\" is not supported!";
//   - OpenAI: "Invalid parameter: 'response_format' of type 'json_schema' is
//     not supported with this model", "Unsupported parameter: '…' is not
//     supported with this model", "Unsupported value: '…' does not support
//     … with this model";
//   - Anthropic, a prefill (a conversation ending on the assistant's turn,
//     which an OpenAI-compatible target answers as a new message) sent to a
//     model without it: "This model does not support assistant message
//     prefill. The conversation must end with a user message.".
//
// Such an error stays the request's (KindBadRequest, the caller's fault: the
// target's breaker counts it as a success, it says nothing against the
// target), with ActionFailover, as a parameter a reasoning model cannot take
// is refused before sending.
func featureUnsupported(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "does not support tools") ||
		strings.Contains(m, "does not support thinking") ||
		strings.Contains(m, "tool choice requires --enable-auto-tool-choice") ||
		strings.Contains(m, `tool_choice = "required" is not supported`) ||
		strings.Contains(m, "is not supported with this model") ||
		strings.Contains(m, "does not support assistant message prefill") ||
		strings.Contains(m, "does not support") && strings.Contains(m, "with this model")
}

// failOverUnsupported gives a bad request that says the target lacks a
// feature (featureUnsupported) ActionFailover, and returns e.
func (e *Error) failOverUnsupported(msg string) *Error {
	if e.Kind == KindBadRequest && featureUnsupported(msg) {
		e.Action = ActionFailover
	}
	return e
}
