package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// errLine reads the line yaml.v3's syntax error names ("yaml: line 4: ...").
var errLine = regexp.MustCompile(`^yaml: line (\d+):`)

// tabHint names the line indented with a tab that the YAML syntax error err
// is about. YAML forbids tabs in indentation, and the parser's own words for
// it ("found character that cannot start any token") do not say so; an editor
// that inserts tabs is the usual cause. Only yaml.v3's errors about a tab get
// the hint, and only for the line the error names (or the next one for "a tab
// character that violates indentation", which names the line before): a tab
// elsewhere may be valid text, in a block scalar or a flow collection, and
// naming it for an unrelated error pointed the reader at a good line.
func tabHint(b []byte, err error) string {
	msg := err.Error()
	m := errLine.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	n, _ := strconv.Atoi(m[1])
	var candidates []int
	switch {
	case strings.Contains(msg, "tab character"):
		candidates = []int{n, n + 1}
	case strings.Contains(msg, "found character that cannot start any token"):
		candidates = []int{n} // a tab, or another character (@, `) that is not the hint's
	}
	lines := bytes.Split(b, []byte("\n"))
	for _, i := range candidates {
		if i < 1 || i > len(lines) {
			continue
		}
		line := lines[i-1]
		indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 {
			return fmt.Sprintf(" (line %d is indented with a tab: YAML indents with spaces only)", i)
		}
	}
	return ""
}
