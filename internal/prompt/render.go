package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"text/template"
	"text/template/parse"
	"unicode/utf8"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/providers"
)

// funcs are the template functions beyond text/template's built-ins, the
// built-ins printf, eq, ne, lt, le, gt and ge replaced by versions that take an
// input number (a json.Number) for the number it holds (see numbers.go), and
// print, println, html, js and urlquery replaced by versions that, like
// printf, refuse a null (errNullPrinted; escapers.go), and slice by one that
// cuts strings by characters, never inside one, clamped to the length
// (slice.go).
var funcs = map[string]any{
	"json":     toJSON,
	"default":  defaultValue,
	"join":     join,
	"upper":    func(v any) (string, error) { s, err := str("upper", v); return strings.ToUpper(s), err },
	"lower":    func(v any) (string, error) { s, err := str("lower", v); return strings.ToLower(s), err },
	"trim":     func(v any) (string, error) { s, err := str("trim", v); return strings.TrimSpace(s), err },
	"printf":   printf,
	"print":    refusingNull("print", fmt.Sprint),
	"println":  refusingNull("println", fmt.Sprintln),
	"html":     refusingNull("html", template.HTMLEscaper),
	"js":       refusingNull("js", template.JSEscaper),
	"urlquery": refusingNull("urlquery", template.URLQueryEscaper),
	"len":      length,
	"slice":    slice,
	"eq":       eq,
	"ne":       ne,
	"lt":       lt,
	"le":       le,
	"gt":       gt,
	"ge":       ge,
}

// Render renders the messages over input, which must be a JSON object (its
// numbers spelt as PostgreSQL's jsonb gives them back: storedSpelling). A key the template reads that the input
// lacks is an error — unless the input schema declares it as an optional
// property, in which case it is null, for `default`, `if` and `with`, and
// left out of {{ json . }} (see absent). A message that renders empty or prints
// "<no value>" is an error, and so are messages without the word "JSON" for a
// json_object prompt (a fault of the prompt: errNoJSONWord). Trailing
// whitespace of each message is trimmed.
// Call ValidateInput first: Render does not check the input schema.
func (p *Prompt) Render(input json.RawMessage) ([]providers.Message, error) {
	data, err := decodeObject(input)
	if err != nil {
		return nil, &RenderError{Prompt: p.ID(), Field: "input", Err: err}
	}
	data, _ = storedSpelling(data, input)
	return p.render(data)
}

// RenderParsed is Render over an input already parsed: data is what
// ParseInput returned for the JSON text input (the API parses each job's input
// once, for its schema check and fingerprint, and the prompt renders from the
// same value instead of decoding it again: 1% of the router's CPU). data is
// not modified. Without data (a job read back from the database) it is Render.
// Like Render, it renders the numbers in the spelling the job's stored input
// gives them (storedSpelling), whatever the spelling of input.
func (p *Prompt) RenderParsed(data map[string]any, input json.RawMessage) ([]providers.Message, error) {
	if data == nil {
		return p.Render(input)
	}
	if d, ok := storedSpelling(data, input); ok {
		return p.render(d) // a copy already: render may add the absent keys to it
	}
	for _, k := range p.optionalKeys {
		if _, ok := data[k]; !ok {
			data = maps.Clone(data) // the caller's map stays as it was
			break
		}
	}
	return p.render(data)
}

// render renders over data, the input's decoded object, which it may extend
// with the optional keys the input lacks (as absent).
func (p *Prompt) render(data map[string]any) ([]providers.Message, error) {
	for _, k := range p.optionalKeys {
		if _, ok := data[k]; !ok {
			data[k] = absent(nil)
		}
	}
	msgs := make([]providers.Message, len(p.templates))
	var out cappedBuffer
	total := 0 // bytes of the messages before
	w := p.takeWork()
	defer p.putWork(w)
	for i, t := range p.templates {
		if c := p.static[i]; c != "" {
			msgs[i] = providers.Message{Role: p.Messages[i].Role, Content: c}
			total += len(c)
			continue
		}
		out.buf.Reset()
		out.limit = MaxRenderedBytes - total
		if err := w.templates[i].Execute(&out, data); err != nil {
			if errors.Is(err, errRenderedTooLarge) {
				return nil, &RenderError{Prompt: p.ID(), Field: messageField(i), Err: err}
			}
			if errors.Is(err, errTooMuchWork) {
				return nil, &RenderError{Prompt: p.ID(), Field: messageField(i), Err: errTooMuchWork}
			}
			if e := absentFieldRead(t, p.Messages[i].Content, err, data); e != nil {
				err = e
			}
			switch {
			case errors.Is(err, errNestedNullPrinted):
				err = withNestedNulls(err, data)
			case errors.Is(err, errNullOrdered):
				err = nullOrdered(t, p.Messages[i].Content, err, data)
			case errors.Is(err, errNullPrinted):
				err = fmt.Errorf(`%w (null or absent here: %s); send it, or use {{ default "x" .key }} or {{ if .key }}`, err, nullPaths(data))
			}
			return nil, &RenderError{Prompt: p.ID(), Field: messageField(i), Err: err}
		}
		content := strings.TrimRight(out.buf.String(), " \t\r\n")
		total += len(content)
		if strings.TrimSpace(content) == "" {
			return nil, &RenderError{Prompt: p.ID(), Field: messageField(i), Err: errors.New("rendered empty for this input")}
		}
		if strings.Contains(content, "<no value>") && !saysText(data, "<no value>") {
			return nil, &RenderError{Prompt: p.ID(), Field: messageField(i), Err: fmt.Errorf(`rendered "<no value>": the template prints a value that is null or absent in the input (null or absent here: %s); send it, or use {{ default "x" .key }} or {{ if .key }}`, nullPaths(data))}
		}
		// {{ .tags }} over ["vip",null] prints "[vip <nil>]", {{ . }} with a
		// null key "map[... key:<nil>]" (printf and print refuse them
		// themselves): "<nil>" comes from nothing else but the message's own
		// text or the input's, and is not refused then (such a null is not
		// detected).
		if strings.Contains(content, "<nil>") && !p.saysNil[i] && holdsNull(data) && !saysText(data, "<nil>") {
			return nil, &RenderError{Prompt: p.ID(), Field: messageField(i), Err: withNestedNulls(errNestedNullPrinted, data)}
		}
		// The input is valid UTF-8 (ParseJSON refuses any other), so text
		// that is not comes from the template: refused here rather than sent
		// to a provider (or failing the tokenizer's round trip).
		if !utf8.ValidString(content) {
			return nil, &RenderError{Prompt: p.ID(), Field: messageField(i), Err: errNotUTF8}
		}
		msgs[i] = providers.Message{Role: p.Messages[i].Role, Content: content}
	}
	if err := p.checkJSONWord(msgs); err != nil {
		return nil, err
	}
	return msgs, nil
}

// staticText returns what t renders for every input when it is plain text
// with no action (a system message, often the longest): render then copies it
// rather than executing the template for each job. It returns "" for a
// template with actions, and for text that render would refuse (blank, or
// with "<no value>" in it), which is then executed and checked as before.
func staticText(t *template.Template) string {
	if t.Tree == nil || t.Tree.Root == nil || len(t.Templates()) != 1 {
		return ""
	}
	var b strings.Builder
	for _, n := range t.Tree.Root.Nodes {
		tn, ok := n.(*parse.TextNode)
		if !ok {
			return ""
		}
		b.Write(tn.Text)
	}
	content := strings.TrimRight(b.String(), " \t\r\n")
	if strings.TrimSpace(content) == "" || strings.Contains(content, "<no value>") {
		return ""
	}
	return content
}

// messageField names message i's content in a RenderError; made only for one
// (made for every message of every job, it was 0.6% of the router's CPU).
func messageField(i int) string { return fmt.Sprintf("messages[%d].content", i) }

func decodeObject(input json.RawMessage) (map[string]any, error) {
	v, err := contract.ParseJSON(input)
	if err != nil {
		return nil, fmt.Errorf("input is not JSON: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("input must be a JSON object, got %s", jsonType(v))
	}
	return m, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil, absent:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []any:
		return "an array"
	case json.Number:
		return "a number"
	}
	return "an object"
}

// errNotUTF8 is a message that rendered text that is not valid UTF-8, the
// prompt's fault: its input is valid UTF-8.
var errNotUTF8 = errors.New("rendered text that is not valid UTF-8 from an input that is: a fault of the prompt's template, not of the input " +
	`(a string literal with a byte escape like "\xff", say): make every string the template prints UTF-8, and cut text with {{ slice .body 0 2000 }}, which cuts between characters`)

// errNullPrinted is printf, print or println given a null: fmt would print it
// as "<nil>" (or "%!s(<nil>)"), which reached the model where a direct
// {{ .key }} of the same optional key is refused ("<no value>", render).
// render adds the keys that are null.
var errNullPrinted = errors.New("the template prints a value that is null or absent in the input")

// toJSON marshals v without HTML escaping (the reader is a model, not a
// browser), but with chat-template delimiters escaped (escapeDelimiters):
// nothing in a string can end it, nor the turn it is in. The optional keys
// the caller did not send are left out of the input's object ({{ json . }});
// one on its own is null.
func toJSON(v any) (string, error) {
	if m, ok := v.(map[string]any); ok {
		v = withoutAbsent(m)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return escapeDelimiters(strings.TrimSuffix(buf.String(), "\n")), nil
}

// defaultValue returns v, or def when v is null, "" or an empty array or object:
// {{ .tier | default "standard" }} or {{ default "standard" .tier }}.
func defaultValue(def, v any) any {
	switch x := v.(type) {
	case nil, absent:
		return def
	case string:
		if x == "" {
			return def
		}
	case []any:
		if len(x) == 0 {
			return def
		}
	case map[string]any:
		if len(x) == 0 {
			return def
		}
	}
	return v
}

// join joins the elements of an array with sep: {{ join ", " .tags }}.
func join(sep string, v any) (string, error) {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := str("join", e)
			if err != nil {
				return "", fmt.Errorf("join: element %d: %w", i, err)
			}
			parts[i] = s
		}
		return strings.Join(parts, sep), nil
	case []string:
		return strings.Join(x, sep), nil
	case nil, absent:
		return "", errors.New("join: value is null")
	}
	return "", fmt.Errorf("join: want an array, got %s", jsonType(v))
}

func str(fn string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return fmt.Sprint(x), nil
	case nil, absent:
		return "", fmt.Errorf("%s: value is null", fn)
	}
	return "", fmt.Errorf("%s: want a string, number or boolean, got %s", fn, jsonType(v))
}

// saysText reports whether a string or key of the decoded input holds text
// ("<no value>", "<nil>"; as written, or escaped as \u003cno value\u003e in
// the JSON): a message may then print it as the caller's own text. Only
// called for a message that contains it.
func saysText(v any, text string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, text)
	case map[string]any:
		for k, e := range x {
			if strings.Contains(k, text) || saysText(e, text) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if saysText(e, text) {
				return true
			}
		}
	}
	return false
}
