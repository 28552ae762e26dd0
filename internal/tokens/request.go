package tokens

import (
	"encoding/json"

	"github.com/routerhq/router/internal/providers"
)

// Counted is what a context-window check counts of a request: its messages
// and what goes with every call besides them, each as one more message of
// its text — a slight over-estimate. Routing (SPEC §8) and the conformance
// runner (SPEC §9) both count it, so a target the runner finds the prompt
// fits is one routing sends it to. The messages' tool calls, the tools and
// the schema below are counted as their compact JSON text, which is what the
// adapters send (both re-encode them): a request with pretty-printed tools
// or tool calls (or a chat job read back from its jsonb row, which writes a
// space after every colon and comma) that fits a window as sent was refused
// as too long for it. Invalid JSON is counted as written.
//   - tools, the definitions of a chat request that offers tools (counted by
//     the provider), as their compact JSON text;
//   - a json_schema response format's schema, as its compact JSON text, with
//     the format's name as the message's name and its description, when
//     set, as one more message: providers that implement structured output
//     through the prompt bill them as input, and a request near the window's
//     edge that left them out passed the check and was refused by the
//     provider. formatText is the schema's compact text when known at no
//     cost (a prompt's, made at load); "" compacts format.Schema;
//   - for json_object, the instruction the Anthropic adapter appends to the
//     system prompt (providers.JSONObjectInstruction), a dozen tokens counted
//     for every provider.
//
// It runs for every job: without tools, a format or tool calls to compact it
// returns msgs as they are, allocating nothing (tool calls already compact,
// as clients usually copy them from an answer, are only scanned); otherwise
// it allocates the longer list once, and the compact text of what was not
// compact, and never changes msgs.
func Counted(msgs []providers.Message, format *providers.ResponseFormat, formatText string, tools json.RawMessage) []providers.Message {
	var schema, description providers.Message
	if f := format; f != nil {
		switch f.Type {
		case "json_schema":
			schema.Name, schema.Content = f.Name, formatText
			if schema.Content == "" {
				text, _ := compactJSON(f.Schema)
				schema.Content = string(text)
			}
			description.Content = f.Description
		case "json_object":
			schema.Content = providers.JSONObjectInstruction
		}
	}
	hasTools, hasSchema, hasDescription := len(tools) > 0, schema.Content != "" || schema.Name != "", description.Content != ""
	out, copied := msgs, false
	own := func() { // out becomes a copy of msgs with room for the extra messages
		if !copied {
			out, copied = make([]providers.Message, len(msgs), len(msgs)+3), true
			copy(out, msgs)
		}
	}
	for i := range msgs {
		if calls, changed := compactJSON(msgs[i].ToolCalls); changed {
			own()
			out[i].ToolCalls = calls
		}
	}
	if !hasTools && !hasSchema && !hasDescription {
		return out
	}
	own()
	if hasTools {
		text, _ := compactJSON(tools)
		out = append(out, providers.Message{Content: string(text)})
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
// and priming overheads. It covers every field CountMessages counts (not an
// assistant turn's ReasoningContent: see TestReasoningContentIsNotCounted).
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
