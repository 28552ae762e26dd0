package prompt

import (
	"fmt"
	"regexp"
	"strings"
)

// A template written unquoted after "content:" starts with "{{", which YAML
// reads as the start of a flow mapping: {{ .q }} alone is a mapping (a type
// error), {{ .q }} and more text is not valid YAML, reported at a line near
// it. Neither error says the braces are the cause; these words do.

// quoteTemplateFix says how to write a template YAML would read as a
// mapping or a list.
const quoteTemplateFix = `quote it ('{{ .q }} ...') or write it as a block ("content: |" and the text on the lines below, indented)`

// flowContentHint follows a type error of a content given a flow mapping or
// list.
const flowContentHint = `: YAML reads a value that starts with "{" or "[" as a mapping or a list, not text; ` + quoteTemplateFix

var (
	// templateValueRE is a line whose value (of a key, or a list item)
	// starts with "{{" unquoted.
	templateValueRE = regexp.MustCompile(`^\s*(?:-\s+(?:[\w.-]+:\s+)?|[\w.-]+:\s+)\{\{`)
	// blockScalarRE is a line whose value is a block scalar (| or >): the
	// lines indented below it are its text, not YAML.
	blockScalarRE = regexp.MustCompile(`(?:^\s*-|:)\s+[|>][-+0-9]*\s*(?:#.*)?$`)
)

// unquotedTemplateHint returns, for a manifest that is not valid YAML, a
// sentence naming the first line outside a block scalar whose value starts
// with "{{" unquoted, or "".
func unquotedTemplateHint(raw []byte) string {
	block := -1 // the indentation of the line a block scalar starts on
	for i, line := range strings.Split(string(raw), "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if block >= 0 {
			if strings.TrimSpace(line) == "" || indent > block {
				continue
			}
			block = -1
		}
		if templateValueRE.MatchString(line) {
			return fmt.Sprintf(`; line %d starts a value with "{{" unquoted, which YAML reads as a mapping, not text: %s`, i+1, quoteTemplateFix)
		}
		if blockScalarRE.MatchString(line) {
			block = indent
		}
	}
	return ""
}
