package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/routerhq/router/internal/yamlwords"
)

// decodeSuite reads suite file b: one YAML document (an empty one after it,
// a trailing "---", is fine), a mapping, decoded strictly into s (unknown
// fields and values of the wrong type are refused). It returns the document
// (nil for an empty file, which decodes to nothing) and the problems, each
// worded for the suite's author: the field, the line and what is expected.
func decodeSuite(b []byte, s *Suite) (*yaml.Node, []string) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, []string{"not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, []string{"not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
		}
		if yamlwords.EmptyDocument(&extra) {
			continue
		}
		return nil, []string{fmt.Sprintf(`line %d: a second YAML document starts here ("---"), and a suite is one document (the runner would ignore the second): remove the "---" and move its cases into the cases list above it, or put another prompt's suite in a directory of its own`, extra.Line)}
	}
	if yamlwords.EmptyDocument(&doc) {
		return nil, nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, []string{fmt.Sprintf("line %d: a suite is a mapping of fields (prompt: ..., cases: ...), not %s", top.Line, nodeWords(top))}
	}
	strict := yaml.NewDecoder(bytes.NewReader(b))
	strict.KnownFields(true)
	err := strict.Decode(s)
	if err == nil {
		return &doc, nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return nil, []string{"not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	problems := make([]string, len(te.Errors))
	for i, line := range te.Errors {
		problems[i] = describeYAMLError(line, top)
	}
	return nil, problems
}

var (
	yamlFieldRE     = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)
	yamlTypeRE      = regexp.MustCompile("^line (\\d+): cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")
	yamlDuplicateRE = regexp.MustCompile(`^line (\d+): mapping key "(.*)" already defined at line (\d+)$`)
)

// suiteTypes are the types strict decoding can meet, to list the fields an
// unknown key could have meant.
var suiteTypes = map[string]reflect.Type{
	"conformance.Suite":  reflect.TypeFor[Suite](),
	"conformance.Case":   reflect.TypeFor[Case](),
	"conformance.Expect": reflect.TypeFor[Expect](),
}

// describeYAMLError turns one line of a strict decode's *yaml.TypeError into
// a problem naming the field (cases[0] (name).expect.length[/items]), the
// line, and what is expected there; top is the suite's mapping.
func describeYAMLError(line string, top *yaml.Node) string {
	if m := yamlFieldRE.FindStringSubmatch(line); m != nil {
		lineNo, _ := strconv.Atoi(m[1])
		path := suitePath(top, func(k, _ *yaml.Node) bool { return k != nil && k.Line == lineNo && k.Value == m[2] })
		if path == "" {
			path = m[2]
		}
		msg := fmt.Sprintf("%s: unknown field (line %d)", path, lineNo)
		if t, ok := suiteTypes[m[3]]; ok {
			msg += "; known fields here: " + strings.Join(yamlwords.Fields(t), ", ")
		}
		return msg
	}
	if m := yamlDuplicateRE.FindStringSubmatch(line); m != nil {
		lineNo, _ := strconv.Atoi(m[1])
		path := suitePath(top, func(k, _ *yaml.Node) bool { return k != nil && k.Line == lineNo && k.Value == m[2] })
		if path == "" {
			path = m[2]
		}
		return fmt.Sprintf("%s: line %d: %q appears again (first at line %s); a key may appear once in a mapping: delete one", path, lineNo, m[2], m[3])
	}
	if m := yamlTypeRE.FindStringSubmatch(line); m != nil {
		lineNo, _ := strconv.Atoi(m[1])
		path := suitePath(top, func(_, v *yaml.Node) bool { return v.Line == lineNo && v.ShortTag() == m[2] })
		if path == "" {
			path = yamlwords.TopFieldAt(top, lineNo)
		}
		return fmt.Sprintf("%s: line %d: %s, where %s is expected", path, lineNo, yamlwords.Value(m[2], m[3]), yamlwords.GoType(m[4], suiteTypeWords, "conformance."))
	}
	return line
}

// suitePath is findPath from the suite's top mapping, without the leading
// dot: cases[0] (name).input.
func suitePath(top *yaml.Node, match func(k, v *yaml.Node) bool) string {
	return strings.TrimPrefix(findPath(top, match), ".")
}

// findPath returns the suite path of the first node, in document order, that
// match accepts (a mapping value with its key, or a sequence item with a nil
// key): cases[1] (name).input.subject, with a pointer key in brackets
// (expect.equal[/category]).
func findPath(n *yaml.Node, match func(k, v *yaml.Node) bool) string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			seg := k.Value
			if strings.HasPrefix(seg, "/") {
				seg = "[" + seg + "]"
			} else {
				seg = "." + seg
			}
			if match(k, v) {
				return seg
			}
			if p := findPath(v, match); p != "" {
				return seg + p
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			seg := "[" + strconv.Itoa(i) + "]"
			if name := caseName(v); name != "" {
				seg += " (" + name + ")"
			}
			if match(nil, v) {
				return seg
			}
			if p := findPath(v, match); p != "" {
				return seg + p
			}
		}
	default:
		return ""
	}
	return ""
}

// caseName is the name: of mapping n, "" when it has none.
func caseName(n *yaml.Node) string {
	for _, f := range pairs(n) {
		if f[0].Value == "name" {
			if v := deref(f[1]); v != nil && v.Kind == yaml.ScalarNode {
				return v.Value
			}
		}
	}
	return ""
}

// nodeWords names what a node is, for a message.
func nodeWords(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "this"
}

// suiteTypeWords are the words of the suite's own types (yamlwords.GoType).
var suiteTypeWords = map[string]string{
	"[]conformance.Case":        "a list of cases",
	"map[string]int":            "a mapping of JSON pointers to whole numbers",
	"map[string]string":         "a mapping of JSON pointers to text",
	"map[string][]interface {}": "a mapping of JSON pointers to lists of values",
}
