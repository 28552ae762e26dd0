package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// blankPromptsDir reports prompts_dir written with a blank value (`""`,
// white space, or nothing after the colon, which YAML reads as null). Read
// as left out, it meant the default, `prompts` beside the file, which may be
// missing: a template variable that did not render (`prompts_dir: {{ .dir }}`)
// started a router serving no prompt at all, without a word. It decodes n a
// second time, so yaml.v3 resolves anchors and merge keys as the real
// decode does; a value of the wrong kind is left to wrongTypes.
func blankPromptsDir(n *yaml.Node) string {
	var written struct {
		PromptsDir yaml.Node `yaml:"prompts_dir"`
	}
	if n.Kind != yaml.MappingNode || n.Decode(&written) != nil {
		return ""
	}
	v := written.PromptsDir
	if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!null" && strings.TrimSpace(v.Value) != "") {
		return ""
	}
	return fmt.Sprintf("line %d: prompts_dir is written but blank: leave the key out for the default (prompts beside the configuration file, "+
		"served only if it exists), or name the directory holding the prompts (a blank value is usually a template variable that did not render)", v.Line)
}
