package prompt

import (
	"fmt"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/routerhq/router/internal/spelling"
)

// inputField is a top-level input key a template reads.
type inputField struct {
	name string
	node parse.Node // for its position
}

// inputFields lists the top-level input keys the template t reads by name:
// ".key" where dot is the input (outside the bodies of range and with, whose
// dot is something else; their else branches keep the input) and "$.key"
// anywhere. A key read another way ({{ index . "key" }}) is not listed.
func inputFields(t *template.Template) []inputField {
	if t.Tree == nil || t.Tree.Root == nil {
		return nil
	}
	var out []inputField
	inspect(t.Tree.Root, true, func(n parse.Node, top bool) bool {
		switch n := n.(type) {
		case *parse.FieldNode:
			if top {
				out = append(out, inputField{n.Ident[0], n})
			}
		case *parse.VariableNode:
			if len(n.Ident) > 1 && n.Ident[0] == "$" {
				out = append(out, inputField{n.Ident[1], n})
			}
		}
		return true
	})
	return out
}

// unreadableFields returns a problem for each key the template t (parsed
// from src) reads that an input can never hold: the input schema is closed
// (see closedProperties; how says how it is closed) and does not declare it. Every job would fail to render with a missing key
// and be refused as the caller's fault, for the manifest's typo.
func unreadableFields(t *template.Template, src string, allowed []string, schemaFile, how string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range inputFields(t) {
		if slices.Contains(allowed, f.name) || seen[f.name] {
			continue
		}
		seen[f.name] = true
		msg := fmt.Sprintf("{{ %s }}%s reads %q, which the input schema %s never allows (%s), so every job that reaches it would fail to render",
			f.node, nodeAt(src, f.node), f.name, schemaFile, how)
		if len(allowed) == 0 {
			msg += "; the schema declares no properties"
		} else {
			msg += fmt.Sprintf("; did you mean %q? (declared: %s)", closest(f.name, allowed), strings.Join(slices.Sorted(slices.Values(allowed)), ", "))
		}
		out = append(out, msg)
	}
	return out
}

// nodeAt says where a node of the template text src is: " (content line L,
// column C)", both from 1, the column in characters.
func nodeAt(src string, n parse.Node) string {
	at := int(n.Position())
	if v, ok := n.(*parse.VariableNode); ok && at > 0 && at <= len(src) && strings.HasPrefix(v.Ident[0], "$") && !strings.HasPrefix(src[at:], "$") {
		at-- // the parser places "$.key" at its ".key"
	}
	line, col := position([]byte(src), at)
	return fmt.Sprintf(" (content line %d, column %d)", line, col)
}

// closest returns the name of names nearest to s by edit distance (the first
// of equals, in sorted order).
func closest(s string, names []string) string {
	sorted := slices.Sorted(slices.Values(names))
	best, bestD := "", -1
	for _, n := range sorted {
		if d := spelling.Distance(s, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	return best
}
