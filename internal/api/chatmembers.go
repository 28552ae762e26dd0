package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/jsontext"
	"github.com/routerhq/router/internal/spelling"
)

// A chat request is decoded with encoding/json, which matches member names
// regardless of case ("Model" is model, and so is "meſſageſ" with U+017F;
// of "content" and "Content" the last counts) and keeps the last of two
// members with one name. A reader in front of the router that compares names
// exactly (a policy proxy, an audit log) would then approve or record one
// request while the router runs another. checkChatMembers refuses both, and
// a top-level name a letter or two from a parameter the router takes
// ("max_token"), which would otherwise be ignored and lift a limit silently.
// Other unknown names are ignored, as OpenAI-compatible servers ignore them.

// chatMemberError is a chat body refused for its member names: param names
// the member (OpenAI's param), detail says why and how to fix it.
type chatMemberError struct{ param, detail string }

func (e *chatMemberError) Error() string { return e.detail }

// describeChatError is describeJSONError for a chat body, which also knows
// the member names checkChatMembers refused.
func describeChatError(err error) (detail, param string) {
	if me := (*chatMemberError)(nil); errors.As(err, &me) {
		return me.detail, me.param
	}
	return describeJSONError(err, "")
}

// checkChatMembers checks the member names of body, a chat request that has
// decoded (valid JSON): each name known at its level is written exactly as
// the router reads it, no top-level name is a near miss of a parameter, and
// no object has two members of one name.
func checkChatMembers(body []byte) error {
	var steps [16]pathStep // deeper than chatShapes goes
	if _, err := walkChatValue(body, jsontext.SkipSpace(body, 0), chatShapes, steps[:0]); err != nil {
		return err
	}
	if e := jsontext.DuplicateKey(body); e != nil {
		return &chatMemberError{param: cutName(pointerParam(e.Pointer, e.Key), 200), detail: duplicateDetail(e)}
	}
	return nil
}

// chatShape is what the router reads of one level of a chat request: the
// exact names of an object's members, each with the shape of its value (nil:
// not looked into). An array's elements have the array's shape.
type chatShape struct {
	members map[string]*chatShape
	names   []string // the members' names, sorted: the first a fold matches is named
	typos   bool     // also refuse a near miss (the top level)
}

// chatShapes is the shape of a chat request: chat.Request's JSON names (its
// messages, response_format, response_format.json_schema and
// stream_options), with the members the router and its adapters read from
// values it keeps raw: a message's content parts and tool calls, tools and
// tool_choice (go-openai's types, as the OpenAI adapter decodes them, and the
// structs of internal/chat's tool contract).
var chatShapes = func() *chatShape {
	top := shapeOf(reflect.TypeFor[chat.Request](), map[reflect.Type]*chatShape{})
	top.typos = true
	// contentText's text parts.
	graft(top, newShape(map[string]*chatShape{"type": nil, "text": nil}), "messages", "content")
	// Calls in an assistant's message, as the OpenAI adapter decodes them (the
	// Anthropic adapter reads id and function's name and arguments).
	graft(top, shapeOf(reflect.TypeFor[openai.ToolCall](), map[reflect.Type]*chatShape{}), "messages", "tool_calls")
	graft(top, shapeOf(reflect.TypeFor[openai.Tool](), map[reflect.Type]*chatShape{}), "tools")
	named := newShape(map[string]*chatShape{"name": nil})
	choice := merge(shapeOf(reflect.TypeFor[openai.ToolChoice](), map[reflect.Type]*chatShape{}),
		newShape(map[string]*chatShape{"type": nil, "function": named, "allowed_tools": newShape(map[string]*chatShape{
			"mode": nil, "tools": newShape(map[string]*chatShape{"type": nil, "function": named}),
		})}))
	graft(top, choice, "tool_choice")
	return top
}()

// ignoredChatParams are top-level parameters the router does not take and
// ignores on purpose, although they are a letter or two from one it takes
// or would be one day: OpenAI's own (store, metadata, prediction) and those
// of providers behind OpenAI-compatible endpoints (vLLM, OpenRouter,
// Together, …). A name the router takes is never one of these (a known name
// wins): service_tier, prompt_cache_key and safety_identifier, once here,
// are chat.Request's and passed on.
var ignoredChatParams = []string{
	"store", "metadata", "prediction",
	"top_k", "top_a", "min_p", "repetition_penalty", "min_tokens", "models", "extra_body",
}

// shapeOf is the shape of values of Go type t as encoding/json decodes them:
// a struct's members by their JSON names, pointers, slices and arrays seen
// through; nil for any other type (its value is not looked into).
func shapeOf(t reflect.Type, seen map[reflect.Type]*chatShape) *chatShape {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	if s, ok := seen[t]; ok {
		return s
	}
	s := &chatShape{members: map[string]*chatShape{}}
	seen[t] = s
	for i := range t.NumField() {
		if name, ok := jsonName(t.Field(i)); ok {
			s.members[name] = shapeOf(t.Field(i).Type, seen)
		}
	}
	s.names = sortedNames(s.members)
	return s
}

func newShape(members map[string]*chatShape) *chatShape {
	return &chatShape{members: members, names: sortedNames(members)}
}

func sortedNames(m map[string]*chatShape) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// merge is the shape that knows what a or b knows.
func merge(a, b *chatShape) *chatShape {
	if a == nil || b == nil {
		return cmpOr(a, b)
	}
	m := make(map[string]*chatShape, len(a.members)+len(b.members))
	for n, s := range a.members {
		m[n] = s
	}
	for n, s := range b.members {
		m[n] = merge(m[n], s)
	}
	out := newShape(m)
	out.typos = a.typos || b.typos
	return out
}

func cmpOr(a, b *chatShape) *chatShape {
	if a != nil {
		return a
	}
	return b
}

// graft adds s to the shape of the member at path under top (each name a
// member of the one before). A path chat.Request no longer has is left out.
func graft(top, s *chatShape, path ...string) {
	at := top
	for _, name := range path[:len(path)-1] {
		if at = at.members[name]; at == nil {
			return
		}
	}
	last := path[len(path)-1]
	if _, ok := at.members[last]; ok {
		at.members[last] = merge(at.members[last], s)
	}
}

// memberPath is where a value is in the body, for a param: each step a
// member's name, or an array's index when the name is nil.
type memberPath []pathStep

type pathStep struct {
	name  []byte
	index int
}

func (p memberPath) String() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.name == nil:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case b.Len() > 0:
			b.WriteByte('.')
			fallthrough
		default:
			b.Write(s.name)
		}
	}
	return b.String()
}

// walkChatValue checks the member names of the value (valid JSON) that
// starts at body[i], of shape s, at path p; it returns the offset past it.
// An array's elements have its shape, unless they are arrays themselves:
// those are not looked into (no member the router reads holds one), so the
// walk goes no deeper than the shapes do.
func walkChatValue(b []byte, i int, s *chatShape, p memberPath) (int, error) {
	if s == nil || i >= len(b) || (b[i] != '{' && b[i] != '[') {
		return jsontext.SkipValue(b, i), nil
	}
	array := b[i] == '['
	i = jsontext.SkipSpace(b, i+1)
	for n := 0; i < len(b) && b[i] != '}' && b[i] != ']'; n++ {
		child, step := s, pathStep{index: n}
		if array && b[i] == '[' {
			child = nil
		}
		if !array {
			if b[i] != '"' {
				return len(b), nil // not valid JSON: encoding/json refused it already
			}
			end, escaped := jsontext.StringEnd(b, i)
			if end-1 <= i {
				return len(b), nil
			}
			name := b[i+1 : end-1]
			if escaped {
				var u string
				if json.Unmarshal(b[i:end], &u) != nil {
					return len(b), nil
				}
				name = []byte(u)
			}
			known, ok := s.members[string(name)]
			if !ok {
				if err := unknownMember(s, string(name), p); err != nil {
					return len(b), err
				}
			}
			child, step = known, pathStep{name: name}
			i = jsontext.SkipSpace(b, jsontext.SkipSpace(b, end)+1) // past ':'
		}
		var err error
		if child == nil {
			i = jsontext.SkipValue(b, i)
		} else if i, err = walkChatValue(b, i, child, append(p, step)); err != nil {
			return len(b), err
		}
		if i = jsontext.SkipSpace(b, i); i < len(b) && b[i] == ',' {
			i = jsontext.SkipSpace(b, i+1)
		}
	}
	return i + 1, nil
}

// unknownMember is the error for a member name s does not know, in the object
// at p: one that matches a known name regardless of case, or at the top
// level one a letter or two from a known name; nil for any other (ignored).
func unknownMember(s *chatShape, name string, p memberPath) error {
	param := append(p[:len(p):len(p)], pathStep{name: []byte(name)}).String()
	for _, known := range s.names {
		if strings.EqualFold(name, known) {
			return &chatMemberError{param: cutName(param, 200), detail: fmt.Sprintf(
				"unknown parameter %s: names are case-sensitive, and this one differs from %q only in case "+
					"(a reader that ignores case takes it for %q, one that does not ignores it); send it as %q",
				quoteName(param), known, known, known)}
		}
	}
	if !s.typos {
		return nil
	}
	lower := strings.ToLower(name)
	if slices.Contains(ignoredChatParams, lower) {
		return nil
	}
	for _, known := range s.names {
		if d := nearMiss(lower, known); d > 0 {
			return &chatMemberError{param: cutName(name, 200), detail: fmt.Sprintf(
				"unknown parameter %s; did you mean %q? The router ignores parameters it does not know, "+
					"but not one %s from one it takes, which would drop that parameter unnoticed: correct the name, or leave it out",
				quoteName(name), known, map[int]string{1: "a letter", 2: "two letters"}[d])}
		}
	}
	return nil
}

// nearMiss is the spelling distance from name to known when name is a
// likely misspelling of it (0 when not): at most 1 for a name of up to five
// letters ("top_k" is not "top_p"'s typo, "n" has none), at most 2 for a
// longer one.
func nearMiss(name, known string) int {
	limit := 2
	switch {
	case len(known) <= 2:
		return 0
	case len(known) <= 5:
		limit = 1
	}
	if len(name)-len(known) > limit || len(known)-len(name) > limit {
		return 0 // the distance is at least the difference in length
	}
	if d := spelling.Distance(name, known); d <= limit {
		return d
	}
	return 0
}

// pointerParam is the member key of the object at JSON pointer ptr, as
// OpenAI writes a param: "messages[0].content".
func pointerParam(ptr, key string) string {
	var b strings.Builder
	for seg := range strings.SplitSeq(strings.TrimPrefix(ptr, "/"), "/") {
		if ptr == "" {
			break // the body itself
		}
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(seg); err == nil && !strings.HasPrefix(seg, "+") && !strings.HasPrefix(seg, "-") {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(key)
	return b.String()
}
