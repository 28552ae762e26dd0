package config

import (
	"bytes"
	"fmt"
)

// tabHint names the first line indented with a tab. YAML forbids tabs in
// indentation, and the parser's own words for it ("found character that
// cannot start any token") do not say so; an editor that inserts tabs is the
// usual cause.
func tabHint(b []byte) string {
	for i, line := range bytes.Split(b, []byte("\n")) {
		indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 {
			return fmt.Sprintf(" (line %d is indented with a tab: YAML indents with spaces only)", i+1)
		}
	}
	return ""
}
