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
// started a router serving no prompt at all, without a word.
func blankPromptsDir(n *yaml.Node) string {
	line, blank := writtenBlank(n, "prompts_dir")
	if !blank {
		return ""
	}
	return fmt.Sprintf("line %d: prompts_dir is written but blank: leave the key out for the default (prompts beside the configuration file, "+
		"served only if it exists), or name the directory holding the prompts (a blank value is usually a template variable that did not render)", line)
}

// blankDatabaseURL reports database_url written with a blank value (`""`,
// white space, nothing after the colon, `~`). Read as left out, it meant
// SPEC §11's default, the embedded development database in the working
// directory: a production replica whose templated URL did not render ran on
// a private database, its jobs and idempotency keys apart from the other
// replicas', with only a warning. The caller skips it when DATABASE_URL
// overrides the file, as then the file's value is not used.
func blankDatabaseURL(n *yaml.Node) string {
	line, blank := writtenBlank(n, "database_url")
	if !blank {
		return ""
	}
	return fmt.Sprintf("line %d: database_url is written but blank: give the PostgreSQL URL (or set DATABASE_URL), write `embedded` for the embedded development database, "+
		"or leave the key out for that default (a blank value is usually a template variable that did not render)", line)
}

// writtenBlank says whether the mapping n writes key (prompts_dir or
// database_url) with a blank value (`""`, white space, or nothing after the
// colon, which YAML reads as null, like `~`), and on which line. It decodes
// n a second time, so yaml.v3 resolves anchors and merge keys as the real
// decode does; a value of the wrong kind is left to wrongTypes.
func writtenBlank(n *yaml.Node, key string) (line int, blank bool) {
	var written struct {
		PromptsDir  yaml.Node `yaml:"prompts_dir"`
		DatabaseURL yaml.Node `yaml:"database_url"`
	}
	if n.Kind != yaml.MappingNode || n.Decode(&written) != nil {
		return 0, false
	}
	v := written.PromptsDir
	if key == "database_url" {
		v = written.DatabaseURL
	}
	if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!null" && strings.TrimSpace(v.Value) != "") {
		return 0, false
	}
	return v.Line, true
}
