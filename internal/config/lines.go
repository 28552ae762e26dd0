package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// settingLines are the lines of the file on which listen and ops_listen are
// written (0: not written, or not read from a file), so that their problems,
// found on the decoded configuration, say where to look as the file's
// other problems do.
type settingLines struct{ listen, opsListen int }

// at is "line N: " for a setting written on line n, or "" when its line is
// not known.
func (settingLines) at(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("line %d: ", n)
}

// writtenLines finds listen and ops_listen in the mapping n. It decodes n a
// second time, as writtenBlank does, so yaml.v3 resolves anchors and merge
// keys as the real decode does.
func writtenLines(n *yaml.Node) settingLines {
	var written struct {
		Listen    yaml.Node `yaml:"listen"`
		OpsListen yaml.Node `yaml:"ops_listen"`
	}
	if n.Kind != yaml.MappingNode || n.Decode(&written) != nil {
		return settingLines{}
	}
	return settingLines{listen: written.Listen.Line, opsListen: written.OpsListen.Line}
}
