package prompt

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

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/yamlwords"
)

// decodeManifest decodes prompt.yaml strictly into m and reports what the
// decoder refused. It returns the top-level fields whose values the refusal
// left unreliable (a value of the wrong type is left zero, a number with a
// fraction for a whole number cut to one (fractionFields); a mapping with a
// repeated key is dropped whole), so that the checks that follow do not add
// false problems about them ("max_tokens: required" for `max_tokens: lots`).
// ok is false when nothing further can be checked: the file is not YAML, is
// empty, holds a second document, is not a mapping, or repeats a top-level
// field.
func decodeManifest(raw []byte, m *manifest, report func(string, string, ...any)) (bad map[string]bool, ok bool) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			report("", "the file is empty; write the manifest: name, version, max_tokens, output_schema and messages")
		} else {
			report("", "not valid YAML: %v%s", err, unquotedTemplateHint(raw))
		}
		return nil, false
	}
	for {
		// Documents after the manifest: an empty one (a trailing "---", as
		// generators write) holds nothing to ignore; any other is refused.
		var extra yaml.Node
		err := dec.Decode(&extra)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			report("", "not valid YAML: %v", err)
			return nil, false
		}
		if yamlwords.EmptyDocument(&extra) {
			continue
		}
		report("", `line %d: a second YAML document starts here ("---"), and a manifest is one document (the router would ignore the second): remove the "---" and merge what follows into the manifest above it, or put another prompt in a directory of its own`, extra.Line)
		return nil, false
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		report("", "line %d: the manifest must be a mapping of fields (name: ..., version: ..., messages: ...), not %s", top.Line, nodeKind(top))
		return nil, false
	}

	strict := yaml.NewDecoder(bytes.NewReader(raw))
	strict.KnownFields(true)
	err := strict.Decode(m)
	exactEnums(top, &m.Rules, report)
	emptyItems(top, report)
	bad = fractionFields(top, report)
	if err == nil {
		return bad, true
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		report("", "not valid YAML: %v", err)
		return nil, false
	}
	if bad == nil {
		bad = map[string]bool{}
	}
	ok = true
	for _, line := range te.Errors {
		e := describeYAMLError(line, top)
		report(e.field, "%s", e.msg)
		if e.unknown {
			continue // the key was skipped; the rest decoded
		}
		name := strings.FieldsFunc(e.field, func(r rune) bool { return r == '.' || r == '[' })
		if len(name) == 0 || e.repeated && name[0] == e.field {
			ok = false // a repeated top-level field drops the whole manifest
			continue
		}
		bad[name[0]] = true
	}
	return bad, ok
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "empty"
		}
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "this"
}

var (
	yamlFieldRE     = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)
	yamlTypeRE      = regexp.MustCompile("^line (\\d+): cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")
	yamlDuplicateRE = regexp.MustCompile(`^line (\d+): mapping key "(.*)" already defined at line (\d+)$`)
	// yamlValueRE is a value contract.Range refuses (.inf, 010).
	yamlValueRE = regexp.MustCompile("^line (\\d+): value `(.*)` (.+)$")
)

// yamlTypes maps the types strict decoding can meet to their place in the
// manifest, to name the field of an unknown key.
var yamlTypes = map[string]struct {
	prefix string
	typ    reflect.Type
}{
	"prompt.manifest":      {"", reflect.TypeFor[manifest]()},
	"prompt.messageSpec":   {"messages[].", reflect.TypeFor[messageSpec]()},
	"contract.Rules":       {"rules.", reflect.TypeFor[contract.Rules]()},
	"contract.Range":       {"rules.ranges[].", reflect.TypeFor[contract.Range]()},
	"contract.EqualRule":   {"rules.equal[].", reflect.TypeFor[contract.EqualRule]()},
	"contract.ProductRule": {"rules.products[].", reflect.TypeFor[contract.ProductRule]()},
	"contract.SumRule":     {"rules.sums[].", reflect.TypeFor[contract.SumRule]()},
}

// yamlError is one strict-decoding error, described.
type yamlError struct {
	field, msg string
	unknown    bool // an unknown key: decoding skipped it and kept the rest
	repeated   bool // a repeated key: decoding dropped the mapping holding it
}

// describeYAMLError turns one strict-decoding error into a field and a
// message; top is the manifest's mapping, to find the field an error's line
// is about.
func describeYAMLError(line string, top *yaml.Node) yamlError {
	if m := yamlFieldRE.FindStringSubmatch(line); m != nil {
		lineNo, _ := strconv.Atoi(m[1])
		t, ok := yamlTypes[m[3]]
		if !ok {
			return yamlError{field: m[2], msg: fmt.Sprintf("unknown field (line %d)", lineNo), unknown: true}
		}
		return yamlError{field: t.prefix + m[2], msg: fmt.Sprintf("unknown field (line %d); known fields: %s", lineNo, strings.Join(yamlwords.Fields(t.typ), ", ")), unknown: true}
	}
	if m := yamlDuplicateRE.FindStringSubmatch(line); m != nil {
		lineNo, _ := strconv.Atoi(m[1])
		path := findYAMLPath(top, func(k, _ *yaml.Node) bool { return k != nil && k.Line == lineNo && k.Value == m[2] })
		return yamlError{field: path, msg: fmt.Sprintf("line %d: %q appears again (first at line %s); a key may appear once in a mapping: delete one", lineNo, m[2], m[3]), repeated: true}
	}
	if m := yamlTypeRE.FindStringSubmatch(line); m != nil {
		lineNo, _ := strconv.Atoi(m[1])
		var found *yaml.Node
		path := findYAMLPath(top, func(_, v *yaml.Node) bool {
			if v.Line == lineNo && v.ShortTag() == m[2] {
				found = v
				return true
			}
			return false
		})
		if path == "" {
			path = yamlwords.TopFieldAt(top, lineNo)
		}
		msg := fmt.Sprintf("line %d: %s, where %s is expected", lineNo, yamlwords.Value(m[2], m[3]), yamlwords.GoType(m[4], nil, "contract.", "prompt."))
		if found != nil && found.Style&yaml.FlowStyle != 0 && strings.HasSuffix(path, ".content") {
			msg += flowContentHint // content: {{ .q }}, a template read as a mapping
		}
		return yamlError{field: path, msg: msg}
	}
	if m := yamlValueRE.FindStringSubmatch(line); m != nil {
		lineNo, _ := strconv.Atoi(m[1])
		path := findYAMLPath(top, func(_, v *yaml.Node) bool { return v.Line == lineNo && v.Kind == yaml.ScalarNode && v.Value == m[2] })
		if path == "" {
			path = yamlwords.TopFieldAt(top, lineNo)
		}
		return yamlError{field: path, msg: line}
	}
	return yamlError{msg: line}
}

// findYAMLPath returns the manifest path (messages[1].content) of the first
// node, in document order, that match accepts: a mapping value with its key,
// or a sequence item with a nil key.
func findYAMLPath(n *yaml.Node, match func(k, v *yaml.Node) bool) string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if match(k, v) {
				return k.Value
			}
			if p := findYAMLPath(v, match); p != "" {
				return k.Value + joinYAMLPath(p)
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			if match(nil, v) {
				return "[" + strconv.Itoa(i) + "]"
			}
			if p := findYAMLPath(v, match); p != "" {
				return "[" + strconv.Itoa(i) + "]" + joinYAMLPath(p)
			}
		}
	}
	return ""
}

func joinYAMLPath(p string) string {
	if strings.HasPrefix(p, "[") {
		return p
	}
	return "." + p
}
