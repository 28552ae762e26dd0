package providers

import (
	"regexp"
	"strings"
)

// anthropicToolPath and anthropicToolChoicePath match, in a lower-cased
// message, the start of Anthropic's refusal of a tool or tool_choice the model or its strict tool
// use cannot take: "tools.0.custom: …", "tools.3.custom.input_schema: …",
// "tool_choice: …".
var (
	anthropicToolPath       = regexp.MustCompile(`^tools\.\d+\.custom(\.[a-z0-9_.]+)?:`)
	anthropicToolChoicePath = regexp.MustCompile(`^tool_choice(\.[a-z0-9_.]+)?:`)
)

// anthropicFeatureRefused reports an invalid_request_error in which
// Anthropic says this target cannot take a feature of the request the
// route's OpenAI-compatible targets take — not that the request is wrong:
//
//   - a strict tool's schema with a keyword Anthropic's strict tool use
//     does not support, which OpenAI's strict mode takes: "tools.0.custom:
//     For 'array' type, property 'maxItems' is not supported",
//     "tools.25.custom: For 'integer' type, properties maximum, minimum are
//     not supported" (the adapter forwards function.strict);
//   - a forced tool_choice on a model without it: `tool_choice: type "tool"
//     and "any" are not supported for this model.`.
//
// (A prefill on a model without it, "This model does not support assistant
// message prefill", is featureUnsupported's.) The match is narrow: only a
// message under a tool's path (tools.N.custom) that says "not supported",
// and one under tool_choice that says "not supported for this model"; what
// the caller got wrong in a tool ("tools.0.custom.name: String should match
// pattern …", "tools.0.custom.input_schema: JSON schema is invalid …",
// "tool_choice.tool.name: Field required") is refused by every target and
// stays a bad request that stops the job. Like featureUnsupported's, such an
// error stays the request's bad_request (the target's breaker does not count
// it) and fails over.
func anthropicFeatureRefused(msg string) bool {
	m := strings.ToLower(strings.TrimSpace(msg))
	switch {
	case anthropicToolPath.MatchString(m):
		return strings.Contains(m, "not supported")
	case anthropicToolChoicePath.MatchString(m):
		return strings.Contains(m, "not supported for this model")
	}
	return false
}
