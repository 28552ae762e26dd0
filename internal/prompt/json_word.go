package prompt

import (
	"errors"
	"text/template"
	"text/template/parse"

	"github.com/routerhq/router/internal/providers"
)

// errNoJSONWord is a json_object prompt whose rendered messages lack the word
// "JSON" for an input. The load check (templateText) finds the word in any
// branch, defined template or string literal, which some inputs never print;
// render checks what it rendered, so such a request fails before any
// provider is called instead of being refused by every OpenAI-compatible
// provider (400, an invalid_request_error blamed on the caller).
var errNoJSONWord = errors.New(`response_format json_object needs the word "JSON" in the messages sent ` +
	`(OpenAI-compatible providers refuse the request otherwise), and none of the messages rendered for this input has it: ` +
	`the prompt is at fault, not the input; write "JSON" in text every input prints, ` +
	`outside {{ if }}, {{ with }}, {{ range }}, {{ define }} and the arguments of template functions`)

// alwaysJSON reports whether t prints the word "JSON" for every input it
// renders: its top-level text, outside every action, branch and defined
// template, has it. render then need not look for it.
func alwaysJSON(t *template.Template) bool {
	if t.Tree == nil || t.Tree.Root == nil {
		return false
	}
	for _, n := range t.Tree.Root.Nodes {
		if tn, ok := n.(*parse.TextNode); ok && providers.MentionsJSON(string(tn.Text)) {
			return true
		}
	}
	return false
}

// checkJSONWord is render's check of a json_object prompt's rendered
// messages; nil when the word is there, or always is (p.jsonAlways).
func (p *Prompt) checkJSONWord(msgs []providers.Message) error {
	if p.Format != FormatJSONObject || p.jsonAlways {
		return nil
	}
	for _, m := range msgs {
		if providers.MentionsJSON(m.Content) {
			return nil
		}
	}
	return &RenderError{Prompt: p.ID(), Field: "messages", Err: errNoJSONWord}
}
