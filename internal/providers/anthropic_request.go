package providers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
)

// JSONObjectInstruction is appended to the system prompt for response format
// json_object, which the Messages API has no switch for.
const JSONObjectInstruction = "Respond with one JSON object and nothing else."

// messageParams translates the router's request (OpenAI-shaped) into a Messages
// API request: system messages become the system prompt, tool calls and tool
// results become tool_use and tool_result blocks, consecutive messages of one
// role merge, OpenAI tools and tool_choice map to Anthropic's, and a json_schema
// response format uses the structured-output feature (output_config.format).
func (p *Anthropic) messageParams(req *Request) (anthropic.MessageNewParams, *Error) {
	var params anthropic.MessageNewParams
	if req == nil {
		return params, NewError(p.cfg.Name, KindMisconfigured, "nil request")
	}
	model := req.Model
	if model == "" {
		model = p.cfg.Model
	}
	if model == "" {
		return params, NewError(p.cfg.Name, KindMisconfigured, "no model: set the provider's model or the request's")
	}
	params.Model = anthropic.Model(model)
	if e := p.unsent(req); e != nil {
		return params, e
	}
	params.MaxTokens = int64(p.cfg.MaxTokens)
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	// Temperature, top_p and Seed are not sent: the Messages API of this SDK
	// version has none of them (docs/providers.md). Stop sequences are: a
	// caller relies on them to end the answer where it says, and Anthropic
	// leaves the sequence out of the text as OpenAI does. Those Anthropic
	// refuses (whitespace only) are applied to the answer (cutAtStops).
	if sent, _ := anthropicStops(req.Stop); len(sent) > 0 {
		params.StopSequences = sent
	}
	if req.User != "" {
		params.Metadata.UserID = anthropic.String(anthropicUserID(req.User))
	}
	// first[k] is the index in req.Messages of the first message of turn k
	// (params.Messages[k]), for blankUserTurn's message.
	var first []int
	var ids anthropicToolIDs // the tool ids sent, unique in the request
	for i, m := range req.Messages {
		if e := p.addMessage(&params, &ids, i, m); e != nil {
			return params, e
		}
		for len(first) < len(params.Messages) {
			first = append(first, i)
		}
	}
	if e := p.blankUserTurn(params.Messages, first); e != nil {
		return params, e
	}
	if len(params.Messages) == 0 {
		// A system prompt alone is a valid conversation for an
		// OpenAI-compatible target: as unsent, the request's fault (its
		// breaker does not count it) that another target may take.
		e := badRequest(p.cfg.Name, "messages: the Messages API needs at least one user or assistant message besides the system prompt")
		e.Action = ActionFailover
		return params, e
	}
	for _, m := range params.Messages {
		if m.OfUser != nil {
			m.OfUser.Content = dropBlankText(m.OfUser.Content)
		}
	}
	trimPrefill(params.Messages[len(params.Messages)-1])
	if len(req.Tools) > 0 {
		tools, e := p.tools(req.Tools)
		if e != nil {
			return params, e
		}
		params.Tools = tools
	}
	if len(req.ToolChoice) > 0 {
		tc, allowed, e := p.toolChoice(req.ToolChoice)
		if e != nil {
			return params, e
		}
		params.ToolChoice = tc
		if allowed != nil {
			params.Tools = onlyTools(params.Tools, allowed)
		}
	}
	if pt := req.ParallelToolCalls; pt != nil && !*pt && len(req.Tools) > 0 {
		disableParallelToolUse(&params.ToolChoice)
	}
	if len(params.Tools) == 0 {
		// A tool history in a request that offers no tools: declared,
		// and none may be called (historyTools).
		if tools := historyTools(params.Messages); tools != nil {
			params.Tools = tools
			params.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "", "text":
		case "json_object":
			params.System = append(params.System, anthropic.TextBlockParam{Text: JSONObjectInstruction})
		case "json_schema":
			format, err := anthropicOutputFormat(rf.Schema)
			if err != nil {
				e := NewError(p.cfg.Name, KindMisconfigured, "response format json_schema: Schema is not a JSON object: "+err.Error())
				e.Action = ActionStop // the same schema goes to every provider
				return params, e
			}
			params.OutputConfig.Format = format
			if text := formatDescriptionInstruction(rf); text != "" {
				params.System = append(params.System, anthropic.TextBlockParam{Text: text})
			}
		default:
			e := NewError(p.cfg.Name, KindMisconfigured, "unknown response format type "+rf.Type+": want json_schema or json_object")
			e.Action = ActionStop
			return params, e
		}
	}
	return params, nil
}

func badRequest(provider, msg string) *Error {
	return NewError(provider, KindBadRequest, msg)
}

// blank reports text the Messages API refuses as a text block: empty ("text
// content blocks must be non-empty") or whitespace only ("text content blocks
// must contain non-whitespace text", when the message has nothing else).
func blank(s string) bool { return strings.TrimSpace(s) == "" }

// addMessage appends one OpenAI-shaped message. Text the Messages API refuses
// as a block (blank) is left out: an empty or blank system or developer
// message adds nothing to the system prompt, a blank assistant text nothing
// to its turn (a turn of nothing at all is not sent: the user turns around
// it merge), and a blank tool result is sent as a tool_result without
// content. A blank user message — empty or whitespace only — is kept as its
// turn's text: dropBlankText leaves it out when its turn holds something
// else, and blankUserTurn refuses the request when it does not (see there).
// Tool call ids are sent as ids gives them: unique in the request, a tool
// result naming the id its call was sent under.
func (p *Anthropic) addMessage(params *anthropic.MessageNewParams, ids *anthropicToolIDs, i int, m Message) *Error {
	switch m.Role {
	case "system", "developer":
		if !blank(m.Content) {
			params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
		}
		return nil
	case "user":
		appendBlocks(params, "user", anthropic.NewTextBlock(m.Content))
		return nil
	case "tool":
		if m.ToolCallID == "" {
			return badRequest(p.cfg.Name, fmt.Sprintf("messages[%d]: a tool message needs tool_call_id", i))
		}
		result := anthropic.NewToolResultBlock(ids.result(m.ToolCallID), m.Content, false)
		if blank(m.Content) {
			result.OfToolResult.Content = nil // a tool_result's content is optional; an empty text block is refused
		}
		appendBlocks(params, "user", result)
		return nil
	case "assistant":
		var blocks []anthropic.ContentBlockParamUnion
		if !blank(m.Content) {
			blocks = append(blocks, anthropic.NewTextBlock(m.Content))
		}
		// A refusal is what the assistant said: the Messages API has no
		// field for it, so it is the turn's text.
		if !blank(m.Refusal) {
			blocks = append(blocks, anthropic.NewTextBlock(m.Refusal))
		}
		if len(m.ToolCalls) > 0 {
			var calls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			}
			if err := json.Unmarshal(m.ToolCalls, &calls); err != nil {
				return badRequest(p.cfg.Name, fmt.Sprintf("messages[%d].tool_calls: %v", i, err))
			}
			for j, c := range calls {
				args := strings.TrimSpace(c.Function.Arguments)
				if args == "" {
					args = "{}"
				}
				if !json.Valid([]byte(args)) {
					return badRequest(p.cfg.Name, fmt.Sprintf("messages[%d].tool_calls[%d].function.arguments is not JSON", i, j))
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(ids.call(i, c.ID, j == 0), json.RawMessage(toolInputObject(args)), c.Function.Name))
			}
		}
		if len(blocks) > 0 {
			appendBlocks(params, "assistant", blocks...)
		}
		return nil
	}
	return badRequest(p.cfg.Name, fmt.Sprintf("messages[%d].role %q: want system, user, assistant or tool", i, m.Role))
}

// toolInputObject is a history tool call's arguments (valid JSON, trimmed)
// as a tool_use input, which the Messages API requires to be an object
// (400 "Input should be a valid dictionary"), while OpenAI takes any
// string: an object as it is, null as {} (no arguments, as empty arguments
// are), and any other value — an array, a string, a number, a boolean —
// wrapped as {"value": …}, so that the model still sees what it was.
func toolInputObject(args string) string {
	switch {
	case strings.HasPrefix(args, "{"):
		return args
	case args == "null":
		return "{}"
	}
	return `{"value":` + args + `}`
}

// dropBlankText removes the blank text blocks of a user turn that holds
// another block (a tool result, or text), which the Messages API would refuse
// with the turn. A turn of blank text alone is left as it is, for
// blankUserTurn to refuse.
func dropBlankText(blocks []anthropic.ContentBlockParamUnion) []anthropic.ContentBlockParamUnion {
	blankText := func(b anthropic.ContentBlockParamUnion) bool { return b.OfText != nil && blank(b.OfText.Text) }
	if !slices.ContainsFunc(blocks, blankText) || !slices.ContainsFunc(blocks, func(b anthropic.ContentBlockParamUnion) bool { return !blankText(b) }) {
		return blocks
	}
	return slices.DeleteFunc(blocks, blankText)
}

// trimPrefill trims the trailing whitespace of the last text block of the
// conversation's final message when it is the assistant's. The Messages API
// takes a final assistant message as a prefill — the start of its answer,
// which the answer continues — and refuses one that ends with whitespace
// (400 "final assistant content cannot end with trailing whitespace"), a
// conversation every OpenAI-compatible target takes. The text is never
// blank (addMessage leaves blank text out), so the block stays.
func trimPrefill(last anthropic.MessageParam) {
	if last.OfAssistant == nil {
		return
	}
	blocks := last.OfAssistant.Content
	for i := len(blocks) - 1; i >= 0; i-- {
		if t := blocks[i].OfText; t != nil {
			t.Text = strings.TrimRightFunc(t.Text, unicode.IsSpace)
			return
		}
	}
}

// appendBlocks adds blocks to the last message when it has the same role (the
// Messages API alternates roles; tool results go in one user turn).
func appendBlocks(params *anthropic.MessageNewParams, role string, blocks ...anthropic.ContentBlockParamUnion) {
	if n := len(params.Messages); n > 0 {
		last := &params.Messages[n-1]
		switch {
		case role == "user" && last.OfUser != nil:
			last.OfUser.Content = append(last.OfUser.Content, blocks...)
			return
		case role == "assistant" && last.OfAssistant != nil:
			last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
			return
		}
	}
	if role == "user" {
		params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
	} else {
		params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
	}
}

// tools maps OpenAI function tools to Anthropic custom tools.
func (p *Anthropic) tools(raw json.RawMessage) ([]anthropic.ToolUnionParam, *Error) {
	var in []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string                     `json:"name"`
			Description string                     `json:"description"`
			Parameters  map[string]json.RawMessage `json:"parameters"`
			Strict      *bool                      `json:"strict"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, badRequest(p.cfg.Name, "tools: "+err.Error())
	}
	out := make([]anthropic.ToolUnionParam, 0, len(in))
	for i, t := range in {
		if t.Type != "" && t.Type != "function" {
			return nil, badRequest(p.cfg.Name, fmt.Sprintf("tools[%d].type %q: only function tools can be sent to the Messages API", i, t.Type))
		}
		tp := anthropic.ToolParam{Name: t.Function.Name, InputSchema: inputSchema(t.Function.Parameters)}
		if t.Function.Description != "" {
			tp.Description = anthropic.String(t.Function.Description)
		}
		if t.Function.Strict != nil {
			tp.Strict = anthropic.Bool(*t.Function.Strict)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &tp})
	}
	return out, nil
}

// inputSchema carries an OpenAI parameters schema (an object schema) over;
// it is never empty (see below). Members stay raw JSON, as the output
// schema does (anthropicOutputFormat): numbers are not rounded and the
// properties keep their order.
func inputSchema(params map[string]json.RawMessage) anthropic.ToolInputSchemaParam {
	s := anthropic.ToolInputSchemaParam{}
	extra := map[string]any{}
	for k, v := range params {
		switch k {
		case "type":
		case "properties":
			if string(v) != "null" {
				s.Properties = v
			}
		case "required":
			var list []any
			if json.Unmarshal(v, &list) == nil {
				for _, r := range list {
					if name, ok := r.(string); ok {
						s.Required = append(s.Required, name)
					}
				}
			}
		default:
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		s.ExtraFields = extra
	}
	if s.Properties == nil {
		// A tool without parameters, or with {"type":"object"} alone, as
		// OpenAI accepts: left zero, input_schema would be omitted, and the
		// Messages API refuses a custom tool without it.
		s.Properties = map[string]any{}
	}
	return s
}

// toolChoice maps OpenAI's tool_choice: "auto", "none", "required" (any tool),
// {"type":"function","function":{"name":...}} (that tool), or
// {"type":"allowed_tools","allowed_tools":{"mode":"auto"|"required","tools":[...]}}:
// the Messages API has no such list, so allowed names the only tools to send,
// with auto or any as the mode says.
func (p *Anthropic) toolChoice(raw json.RawMessage) (tc anthropic.ToolChoiceUnionParam, allowed []string, e *Error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto":
			return anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}, nil, nil
		case "none":
			return anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}, nil, nil
		case "required":
			return anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}, nil, nil
		}
		return anthropic.ToolChoiceUnionParam{}, nil, badRequest(p.cfg.Name, fmt.Sprintf("tool_choice %q: want auto, none, required or a function", s))
	}
	type fn struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	var obj struct {
		Type         string `json:"type"`
		AllowedTools struct {
			Mode  string `json:"mode"`
			Tools []fn   `json:"tools"`
		} `json:"allowed_tools"`
		fn
	}
	err := json.Unmarshal(raw, &obj)
	if err == nil && obj.Type == "allowed_tools" {
		for _, t := range obj.AllowedTools.Tools {
			if t.Function.Name != "" {
				allowed = append(allowed, t.Function.Name)
			}
		}
		switch {
		case len(allowed) == 0:
		case obj.AllowedTools.Mode == "auto":
			return anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}, allowed, nil
		case obj.AllowedTools.Mode == "required":
			return anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}, allowed, nil
		}
		return anthropic.ToolChoiceUnionParam{}, nil, badRequest(p.cfg.Name, `tool_choice: allowed_tools needs a mode ("auto" or "required") and a non-empty list of {"type":"function","function":{"name":...}}`)
	}
	if err != nil || obj.Function.Name == "" {
		return anthropic.ToolChoiceUnionParam{}, nil, badRequest(p.cfg.Name, `tool_choice: want "auto", "none", "required", {"type":"function","function":{"name":...}} or {"type":"allowed_tools",...}`)
	}
	return anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: obj.Function.Name}}, nil, nil
}

// onlyTools returns the tools of tools named in names, in their order.
func onlyTools(tools []anthropic.ToolUnionParam, names []string) []anthropic.ToolUnionParam {
	out := make([]anthropic.ToolUnionParam, 0, len(names))
	for _, t := range tools {
		if t.OfTool != nil && slices.Contains(names, t.OfTool.Name) {
			out = append(out, t)
		}
	}
	return out
}

// disableParallelToolUse sets tool_choice's disable_parallel_tool_use, for
// OpenAI's parallel_tool_calls false: on the choice the caller made, or on
// "auto" (OpenAI's default with tools) when it made none. "none" has no such
// switch and calls no tool anyway.
func disableParallelToolUse(tc *anthropic.ToolChoiceUnionParam) {
	switch {
	case tc.OfAuto != nil:
		tc.OfAuto.DisableParallelToolUse = anthropic.Bool(true)
	case tc.OfAny != nil:
		tc.OfAny.DisableParallelToolUse = anthropic.Bool(true)
	case tc.OfTool != nil:
		tc.OfTool.DisableParallelToolUse = anthropic.Bool(true)
	case tc.OfNone != nil:
	default:
		tc.OfAuto = &anthropic.ToolChoiceAutoParam{DisableParallelToolUse: anthropic.Bool(true)}
	}
}

// unsent refuses a request that sets a parameter the Messages API has no
// counterpart for and that would change the answer: verbosity and
// chat_template_kwargs. It is the request's, not this target's fault (its
// breaker does not count it), and another target of the route (an
// OpenAI-compatible one) may take the request: failed over.
func (p *Anthropic) unsent(req *Request) *Error {
	param := ""
	switch {
	case req.Verbosity != "":
		param = "verbosity"
	case len(req.ChatTemplateKwargs) > 0:
		param = "chat_template_kwargs"
	}
	if param == "" {
		return nil
	}
	e := badRequest(p.cfg.Name, param+" cannot be sent to Anthropic's Messages API, which has no such parameter: "+
		"leave it out, or route the request to an OpenAI-compatible provider")
	e.Action = ActionFailover
	return e
}
