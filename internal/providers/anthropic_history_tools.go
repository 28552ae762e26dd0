package providers

import (
	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
)

// maxHistoryTools bounds the tools historyTools declares: Anthropic refuses
// too many tools (available_tools_limit_exceeded), and one declared tool is
// enough for the request to be taken; OpenAI's own limit is 128.
const maxHistoryTools = 128

// historyToolPlaceholder is the tool declared when the history names no tool
// Anthropic would take as a tool's name (only tool results, or names past 64
// characters).
const historyToolPlaceholder = "earlier_tool"

// historyTools returns the tools to declare, with tool_choice none, for a
// request that offers none but whose history holds tool_use or tool_result
// blocks, and nil when it holds none. The Messages API refuses such a request
// (400 "Requests which include `tool_use` or `tool_result` blocks must define
// tools."), which OpenAI and every OpenAI-compatible target take: the last
// "summarise what you found" turn of an agent, a compaction, a replayed
// transcript. Each distinct tool name the history's calls give is declared,
// in the order they come, with an input schema of any object, so that the
// history still reads as it did; tool_choice none keeps the model from
// calling them, since the caller offered no tool (and chat's Judge refuses an
// answer that calls one anyway, as the provider's fault). A name Anthropic
// refuses as a tool's (not 1 to 64 letters, digits, _ or -) is not declared.
func historyTools(messages []anthropic.MessageParam) []anthropic.ToolUnionParam {
	var (
		names []string
		seen  map[string]bool
		found bool
	)
	for _, m := range messages {
		var blocks []anthropic.ContentBlockParamUnion
		switch {
		case m.OfUser != nil:
			blocks = m.OfUser.Content
		case m.OfAssistant != nil:
			blocks = m.OfAssistant.Content
		}
		for _, b := range blocks {
			switch {
			case b.OfToolResult != nil:
				found = true
			case b.OfToolUse != nil:
				found = true
				name := b.OfToolUse.Name
				if len(names) >= maxHistoryTools || !validAnthropicToolName(name) || seen[name] {
					continue
				}
				if seen == nil {
					seen = map[string]bool{}
				}
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	if !found {
		return nil
	}
	if len(names) == 0 {
		names = []string{historyToolPlaceholder}
	}
	tools := make([]anthropic.ToolUnionParam, len(names))
	for i, name := range names {
		tools[i] = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: name, InputSchema: inputSchema(nil)}}
	}
	return tools
}

// validAnthropicToolName reports a name the Messages API takes as a custom
// tool's: ^[a-zA-Z0-9_-]{1,64}$ (Anthropic's tool-use docs).
func validAnthropicToolName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := range len(name) {
		if !anthropicToolIDChar(rune(name[i])) {
			return false
		}
	}
	return true
}
