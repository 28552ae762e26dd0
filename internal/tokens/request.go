package tokens

import (
	"bytes"
	"encoding/json"

	"github.com/routerhq/router/internal/providers"
)

// Counted is what a context-window check counts of a request: its messages
// and what goes with every call besides them, each as one more message of
// its text — a slight over-estimate. Routing (SPEC §8) and the conformance
// runner (SPEC §9) both count it, so a target the runner finds the prompt
// fits is one routing sends it to.
//   - tools, the definitions of a chat request that offers tools (counted by
//     the provider), as their JSON text;
//   - a json_schema response format's schema, as its compact JSON text (what
//     the adapters send), with the format's name as the message's name and
//     its description, when set, as one more message: providers that
//     implement structured output through the prompt bill them as input, and
//     a request near the window's edge that left them out passed the check
//     and was refused by the provider. formatText is the schema's compact
//     text when known at no cost (a prompt's, made at load); "" compacts
//     format.Schema (invalid JSON is counted as written);
//   - for json_object, the instruction the Anthropic adapter appends to the
//     system prompt (providers.JSONObjectInstruction), a dozen tokens counted
//     for every provider.
//
// It runs for every job: without tools or a format it returns msgs as they
// are, allocating nothing; otherwise it allocates the longer list once and
// never changes msgs.
func Counted(msgs []providers.Message, format *providers.ResponseFormat, formatText string, tools json.RawMessage) []providers.Message {
	var schema, description providers.Message
	if f := format; f != nil {
		switch f.Type {
		case "json_schema":
			schema.Name, schema.Content = f.Name, formatText
			if schema.Content == "" {
				var b bytes.Buffer
				b.Grow(len(f.Schema))
				if json.Compact(&b, f.Schema) == nil {
					schema.Content = b.String()
				} else {
					schema.Content = string(f.Schema)
				}
			}
			description.Content = f.Description
		case "json_object":
			schema.Content = providers.JSONObjectInstruction
		}
	}
	hasTools, hasSchema, hasDescription := len(tools) > 0, schema.Content != "" || schema.Name != "", description.Content != ""
	if !hasTools && !hasSchema && !hasDescription {
		return msgs
	}
	out := make([]providers.Message, len(msgs), len(msgs)+3)
	copy(out, msgs)
	if hasTools {
		out = append(out, providers.Message{Content: string(tools)})
	}
	if hasSchema {
		out = append(out, schema)
	}
	if hasDescription {
		out = append(out, description)
	}
	return out
}

// ByteBound is an upper bound of the tokens of msgs as CountMessages counts
// them: every token covers at least one byte, plus the per-message, per-name
// and priming overheads. It covers every field CountMessages counts.
func ByteBound(msgs []providers.Message) int {
	n := TokensReplyPrime
	for _, m := range msgs {
		n += TokensPerMessage + len(m.Role) + len(m.Content) + len(m.ToolCallID) + len(m.ToolCalls) + len(m.Refusal)
		if m.Name != "" {
			n += TokensPerName + len(m.Name)
		}
	}
	return n
}

// MaxTokensSent is the max_tokens a request asking for requested is sent
// with by a target whose adapter sends targetDefault when a request sets
// none (Anthropic requires max_tokens, and refuses a prompt plus max_tokens
// beyond the window; 0: the adapter sends none). A negative requested (a
// stored job from before the API refused one) asks for nothing: it must not
// shrink the prompt's need. defaulted says the target's default applies.
func MaxTokensSent(requested, targetDefault int) (n int, defaulted bool) {
	n = max(requested, 0)
	if n == 0 && targetDefault > 0 {
		return targetDefault, true
	}
	return n, false
}
