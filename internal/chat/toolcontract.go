package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/routerhq/router/internal/contract"
)

// toolContract is what a request's tools and tool_choice ask of an answer
// (Judge holds a provider's tool calls to it; Normalize refuses a request
// whose contract cannot be built).
type toolContract struct {
	// offered maps each offered function's name to the validator of its
	// arguments: the compiled parameters of a tool with strict: true, nil
	// for any other (its arguments need only be a JSON object).
	offered map[string]*contract.Validator
	// none: tool_choice "none", no call may be made.
	none bool
	// required: tool_choice "required", a named function, or allowed_tools
	// with mode "required": the answer must call.
	required bool
	// allowed, when not nil, are the only functions the answer may call (a
	// named tool_choice, or allowed_tools' list); choice says which
	// tool_choice set it, for a violation's message.
	allowed []string
	choice  string
}

// toolContract is in's contract, compiled once per Input (Judge runs once per
// attempt, attempts of a race at once). A contract that does not compile (a
// stored intent from before Normalize checked it) is judged as far as it
// compiled.
func (in *Input) toolContract() *toolContract {
	toolsMu.Lock()
	tc := in.tools
	toolsMu.Unlock()
	if tc != nil {
		return tc
	}
	tc, _ = compileToolContract(in.owner, in.Tools, in.ToolChoice)
	toolsMu.Lock()
	defer toolsMu.Unlock()
	if in.tools == nil {
		in.tools = tc
	}
	return in.tools
}

// RequiresToolCall reports whether in's tool_choice requires an answer to
// call a tool ("required", a named function, or allowed_tools in mode
// required), as Judge holds an answer to it: an answer without a call breaks
// the request's contract.
func (in *Input) RequiresToolCall() bool {
	return len(in.Tools) > 0 && in.toolContract().required
}

// toolsMu guards Input.tools: a plain field (Input is copied by value, as a
// JSON document), held only to read or set it, never while compiling.
var toolsMu sync.Mutex

// compileToolContract builds the contract of tools (an array of function
// tools, as Normalize accepted them) and tool_choice (nil: auto), its
// schemas compiled for owner. The error,
// when not nil, is a *RequestError naming the field at fault; the contract
// returned with it holds what did compile.
func compileToolContract(owner string, tools, choice json.RawMessage) (*toolContract, error) {
	tc := &toolContract{offered: map[string]*contract.Validator{}}
	var firstErr error
	fail := func(param, format string, args ...any) {
		if firstErr == nil {
			firstErr = &RequestError{Param: param, Message: fmt.Sprintf(format, args...)}
		}
	}
	var list []json.RawMessage
	_ = json.Unmarshal(tools, &list) // Normalize has checked the array and each tool's type
	compile := strictWithinBounds(list)
	if compile != nil {
		fail("tools", "%v", compile)
	}
	for i, raw := range list {
		var tool struct {
			Function map[string]json.RawMessage `json:"function"`
		}
		var name string
		if err := json.Unmarshal(raw, &tool); err != nil || tool.Function == nil {
			fail(fmt.Sprintf("tools[%d].function", i), `tools[%d].function must be an object such as {"name":"...","parameters":{...}}`, i)
			continue
		}
		if err := json.Unmarshal(tool.Function["name"], &name); err != nil || name == "" {
			fail(fmt.Sprintf("tools[%d].function.name", i), "tools[%d].function.name is required: a function tool needs a name its calls can give", i)
			continue
		}
		if !validSchemaName(name) {
			// OpenAI refuses a function name outside ^[a-zA-Z0-9_-]{1,64}$,
			// Anthropic a tool name outside ^[a-zA-Z0-9_-]{1,128}$.
			fail(fmt.Sprintf("tools[%d].function.name", i), "tools[%d].function.name %q is not 1 to 64 letters, digits, underscores or dashes "+
				"(OpenAI refuses any other function name): rename it, for example %q", i, cut(name, 64), nameFrom(name, "function"))
		}
		if _, dup := tc.offered[name]; dup {
			// Anthropic refuses two tools of one name, and a call could not
			// say which of the two it calls. The first is kept.
			fail(fmt.Sprintf("tools[%d].function.name", i), "tools[%d].function.name %q is also the name of tools[%d]: each tool needs its own name; "+
				"rename one of them, or leave one out", i, cut(name, 64), firstToolNamed(list, name))
			continue
		}
		var v *contract.Validator
		params := tool.Function["parameters"]
		if compile == nil && strict(tool.Function) {
			param := fmt.Sprintf("tools[%d].function.parameters", i)
			off, fenced := false, false
			var err error
			v, err = contract.NewRequestValidatorFor(owner, params, param, contract.Rules{NoExtraKeys: &off, AllowFenced: &fenced})
			if err != nil {
				v = nil
				var be *contract.SchemaBoundsError
				var pe *contract.SchemaPatternError
				if errors.As(err, &be) || errors.As(err, &pe) {
					fail(param, "%v", err)
				} else {
					fail(param, "the JSON Schema of strict tool %q does not compile: %v", cut(name, 60), err)
				}
			}
		}
		tc.offered[name] = v
	}
	if !present(choice) {
		return tc, firstErr
	}
	var s string
	if json.Unmarshal(choice, &s) == nil {
		tc.none, tc.required = s == "none", s == "required"
		return tc, firstErr
	}
	var obj struct {
		Type     string `json:"type"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
		AllowedTools *struct {
			Mode  string `json:"mode"`
			Tools []struct {
				Type     string `json:"type"`
				Function *struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		} `json:"allowed_tools"`
	}
	if err := json.Unmarshal(choice, &obj); err != nil {
		fail("tool_choice", `tool_choice must be "none", "auto", "required", {"type":"function","function":{"name":"..."}} or {"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[...]}}`)
		return tc, firstErr
	}
	offered := func(name string) bool { _, ok := tc.offered[name]; return ok }
	switch obj.Type {
	case "function":
		if obj.Function == nil || obj.Function.Name == "" {
			fail("tool_choice", `tool_choice of type function needs the function's name: {"type":"function","function":{"name":"..."}}`)
			return tc, firstErr
		}
		if !offered(obj.Function.Name) {
			fail("tool_choice", "tool_choice names function %q, which tools does not offer", cut(obj.Function.Name, 60))
		}
		tc.required, tc.allowed = true, []string{obj.Function.Name}
		tc.choice = "tool_choice names function " + strconv.Quote(cut(obj.Function.Name, 60))
	case "allowed_tools":
		at := obj.AllowedTools
		if at == nil || len(at.Tools) == 0 {
			fail("tool_choice", `tool_choice of type allowed_tools needs allowed_tools.tools, a non-empty list such as [{"type":"function","function":{"name":"..."}}]`)
			return tc, firstErr
		}
		switch at.Mode {
		case "auto":
		case "required":
			tc.required = true
		default:
			fail("tool_choice", "tool_choice.allowed_tools.mode %q is not auto or required", cut(at.Mode, 60))
			return tc, firstErr
		}
		for i, t := range at.Tools {
			if t.Type != "function" || t.Function == nil || t.Function.Name == "" {
				fail("tool_choice", `tool_choice.allowed_tools.tools[%d] is not {"type":"function","function":{"name":"..."}}: the router supports only function tools`, i)
				return tc, firstErr
			}
			if !offered(t.Function.Name) {
				fail("tool_choice", "tool_choice.allowed_tools.tools[%d] names function %q, which tools does not offer", i, cut(t.Function.Name, 60))
			}
			tc.allowed = append(tc.allowed, t.Function.Name)
		}
		tc.choice = "tool_choice allows only " + strconv.Itoa(len(tc.allowed)) + " of the offered functions"
	default:
		fail("tool_choice", `tool_choice must be "none", "auto", "required", {"type":"function","function":{"name":"..."}} or {"type":"allowed_tools","allowed_tools":{...}}; an object of type %s is not supported`, typeOf(anyType(obj.Type)))
	}
	return tc, firstErr
}

// firstToolNamed returns the index of the first tool of list whose function
// is named name.
func firstToolNamed(list []json.RawMessage, name string) int {
	for i, raw := range list {
		var tool struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(raw, &tool) == nil && tool.Function.Name == name {
			return i
		}
	}
	return -1
}

// strict reports whether a tool's function is strict and has parameters: a
// schema the router compiles (a caller's, as response_format's is).
func strict(function map[string]json.RawMessage) bool {
	return string(bytes.TrimSpace(function["strict"])) == "true" && present(function["parameters"])
}

// strictWithinBounds holds the parameters of every strict tool of list to
// contract's schema bounds together (each within them alone, a request of
// many tools cost as many times their compile time, tens of seconds of CPU
// for one request); the error says which bound they pass, and none of them is
// then compiled.
func strictWithinBounds(list []json.RawMessage) error {
	var schemas [][]byte
	for _, raw := range list {
		var tool struct {
			Function map[string]json.RawMessage `json:"function"`
		}
		if json.Unmarshal(raw, &tool) == nil && strict(tool.Function) {
			schemas = append(schemas, tool.Function["parameters"])
		}
	}
	if len(schemas) < 2 { // one is bounded by its own compilation
		return nil
	}
	return contract.CheckSchemaBoundsTogether(schemas, "the parameters of the strict tools, together,")
}

// anyType is a tool_choice's type for typeOf ("" is missing).
func anyType(t string) any {
	if t == "" {
		return nil
	}
	return t
}

// judgeCall holds one tool call (at path, naming name, with arguments args
// as the provider sent them: nil when it sent none) to the request's
// contract: a function tools offers and tool_choice allows, and arguments
// that are a string holding a JSON object ("" and none are "{}", as
// normalizeToolCall writes them) valid against a strict tool's parameters.
func (tc *toolContract) judgeCall(path, name string, args any, lengthCut bool) *contract.Violation {
	refuse := func(p, format string, a ...any) *contract.Violation {
		return &contract.Violation{Rule: "tool_calls", Path: p, Message: fmt.Sprintf(format, a...)}
	}
	quoted := strconv.Quote(cut(name, 60))
	if tc.none {
		return refuse(path, "the request set tool_choice none and the provider called function %s", quoted)
	}
	v, ok := tc.offered[name]
	if !ok {
		return refuse(path+".function.name", "the provider called function %s, which the request's tools do not offer", quoted)
	}
	if tc.allowed != nil && !slices.Contains(tc.allowed, name) {
		return refuse(path+".function.name", "%s and the provider called function %s", tc.choice, quoted)
	}
	text := "{}"
	switch a := args.(type) {
	case nil:
	case string:
		if strings.TrimSpace(a) != "" {
			text = a
		}
	default:
		return refuse(path+".function.arguments", "the arguments of the call to %s are not a string holding a JSON object", quoted)
	}
	trimmed := contract.TrimJSONSpace(text)
	if trimmed == "" || trimmed[0] != '{' || !json.Valid([]byte(trimmed)) {
		if lengthCut {
			return &contract.Violation{Rule: "tool_arguments", Path: path + ".function.arguments", Message: fmt.Sprintf(
				"the arguments of the call to %s were cut short by the request's max_tokens (finish_reason length): %s; raise max_tokens (or max_completion_tokens)",
				quoted, strconv.Quote(cut(text, 80)))}
		}
		return refuse(path+".function.arguments", "the arguments of the call to %s are not a JSON object (cut short or malformed): %s",
			quoted, strconv.Quote(cut(text, 80)))
	}
	if dup := contract.DuplicateKey([]byte(trimmed)); dup != nil {
		return refuse(path+".function.arguments", "the arguments of the call to %s: %s", quoted, dup.Message)
	}
	if v != nil {
		if _, vs := v.ValidateText(trimmed); len(vs) > 0 {
			return &contract.Violation{Rule: "tool_arguments", Path: path + ".function.arguments", Message: fmt.Sprintf(
				"the arguments of the call to strict function %s do not match its parameters: %s: %s", quoted, vs[0].Path, vs[0].Message)}
		}
	}
	return nil
}
