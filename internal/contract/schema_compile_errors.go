package contract

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/routerhq/router/internal/spelling"
)

// The compiler's own words for two mistakes an author makes often mislead:
// a "$ref" to nothing is named by its target only, twice made a URL
// ("file:///…/out.json compilation failed: file:///…/out.json#/$defs/x not
// found"), not by where it is; and a misspelt "type" ("strin") fails the
// meta-schema's anyOf twice, the second time with "expected array, but got
// string", as if the type had to be a list. These rewrite them.

// missingRef describes a compile error of the schema document doc that is a
// "$ref" naming nothing: each "$ref" of doc that names the missing target,
// and where it is. "" when err is another error or no "$ref" of doc names it
// (it is in another file the schema refers to).
func missingRef(err error, doc []byte) string {
	var se *jsonschema.SchemaError
	if !errors.As(err, &se) || se.Err == nil {
		return ""
	}
	target, ok := strings.CutSuffix(strings.TrimPrefix(se.Err.Error(), "jsonschema: "), " not found")
	if !ok {
		return ""
	}
	v, perr := ParseJSON(doc)
	if perr != nil {
		return ""
	}
	var found []string
	var walk func(v any, at string, depth int)
	walk = func(v any, at string, depth int) {
		if depth > 256 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && namesTarget(ref, target) {
				found = append(found, fmt.Sprintf("\"$ref\": %s at %s: %s", display(ref), at, missingWhat(ref)))
			}
			for k, e := range x {
				walk(e, joinPath(at, k), depth+1)
			}
		case []any:
			for i, e := range x {
				walk(e, joinPath(at, fmt.Sprint(i)), depth+1)
			}
		}
	}
	walk(v, "$", 0)
	sort.Strings(found)
	return strings.Join(found, "; ")
}

// namesTarget reports whether ref, as written, resolves to target (an
// absolute URL): it is the whole of target or its end after a "/" or at "#".
func namesTarget(ref, target string) bool {
	if ref == "" || !strings.HasSuffix(target, ref) {
		return false
	}
	rest := target[:len(target)-len(ref)]
	return rest == "" || ref[0] == '#' || strings.HasSuffix(rest, "/")
}

// missingWhat says what is missing for a "$ref" that names nothing.
func missingWhat(ref string) string {
	_, frag, _ := strings.Cut(ref, "#")
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return fmt.Sprintf("no \"$anchor\" %q is defined", frag)
	}
	return "nothing is at that JSON pointer; point it at a schema that exists (like \"#/$defs/<name>\" for one under \"$defs\")"
}

// dropTypeAdvice removes, from each "anyOf" failure of the meta-schema, the
// branches that failed only on their "type" when another branch failed on
// something else: for "type": "strin" the enum of type names is the advice,
// not "expected array" (a list of types) beside it.
func dropTypeAdvice(ve *jsonschema.ValidationError) {
	if strings.HasSuffix(ve.KeywordLocation, "/anyOf") {
		var kept []*jsonschema.ValidationError
		for _, c := range ve.Causes {
			if len(c.Causes) > 0 || keyword(c.KeywordLocation) != "type" {
				kept = append(kept, c)
			}
		}
		if len(kept) > 0 {
			ve.Causes = kept
		}
	}
	for _, c := range ve.Causes {
		dropTypeAdvice(c)
	}
}

// simpleTypes are the names "type" takes.
var simpleTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// typeSpelling is ` (did you mean "string"?)` for a "type" of doc at path (a
// violation's) that is a string close to a type's name, "" otherwise.
func typeSpelling(doc any, path string) string {
	if !strings.HasSuffix(path, "/type") {
		return ""
	}
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch x := doc.(type) {
		case map[string]any:
			doc = x[seg]
		default:
			return "" // a type inside a list is not reached: the message names it
		}
	}
	name, ok := doc.(string)
	if !ok {
		return ""
	}
	best, bestD := "", 3 // at most 2 edits away
	for _, t := range simpleTypes {
		if d := spelling.Distance(strings.ToLower(name), t); d < bestD {
			best, bestD = t, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}
