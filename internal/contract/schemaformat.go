package contract

import (
	"fmt"
	"sort"
	"strings"

	"github.com/routerhq/router/internal/spelling"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// A "format" the library does not know is not checked: for a caller's schema
// that is the standard's rule (an unknown format is an annotation), but a
// prompt's schema asserts its formats (docs/prompts.md), so a misspelt one
// ("datetime", "e-mail", "url") would let every value through unnoticed.
// checkFormats reports such a name when the prompt loads.

// checkFormats returns an error naming the first subschema of g (in the
// order the walk meets them) whose "format" the library does not know, with
// the closest name it knows.
func (g *schemaGraph) checkFormats() error {
	for _, s := range g.nodes {
		if s.Format == "" {
			continue
		}
		if _, ok := jsonschema.Formats[s.Format]; ok {
			continue
		}
		hint := ""
		if near := closestFormat(s.Format); near != "" {
			hint = fmt.Sprintf("did you mean %q? ", near)
		}
		return fmt.Errorf("format %q at %s is not a format the router checks, so no value would be checked against it: %s"+
			"the formats checked are %s", s.Format, schemaPointer(s.Location), hint, strings.Join(knownFormats(), ", "))
	}
	return nil
}

func knownFormats() []string {
	names := make([]string, 0, len(jsonschema.Formats))
	for n := range jsonschema.Formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// closestFormat is the known format closest to name (case, '-' and '_'
// aside, then by edit distance), or "" when none is close.
func closestFormat(name string) string {
	fold := func(s string) string {
		return strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(s))
	}
	best, bestDist := "", 3 // at most two edits away
	for _, k := range knownFormats() {
		d := spelling.Distance(fold(name), fold(k))
		if strings.EqualFold(name, k) {
			d = -1
		}
		if d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}
