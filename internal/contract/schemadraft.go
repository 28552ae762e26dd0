package contract

import (
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The compiler (santhosh-tekuri/jsonschema v5.3.1, compileMap) reads each
// keyword only in the drafts that have it, so a keyword of another draft in
// a prompt's schema ("additionalItems" in 2020-12, "dependentRequired" in
// draft-07: the usual way to write the same constraint a draft earlier or
// later) checked nothing, as a misspelt one did. checkKeywords refuses it,
// saying what the schema's draft reads instead. The drafts are numbered as
// the compiler numbers them.
const (
	draft4    = 4
	draft6    = 6
	draft7    = 7
	draft2019 = 2019
	draft2020 = 2020
)

// draftVersions numbers the compiler's drafts.
var draftVersions = map[*jsonschema.Draft]int{
	jsonschema.Draft4: draft4, jsonschema.Draft6: draft6, jsonschema.Draft7: draft7,
	jsonschema.Draft2019: draft2019, jsonschema.Draft2020: draft2020,
}

// draftNames are the drafts as errors name them, with the "$schema" that
// selects each.
var draftNames = map[int]struct{ name, url string }{
	draft4:    {"draft-04", "http://json-schema.org/draft-04/schema#"},
	draft6:    {"draft-06", "http://json-schema.org/draft-06/schema#"},
	draft7:    {"draft-07", "http://json-schema.org/draft-07/schema#"},
	draft2019: {"draft 2019-09", "https://json-schema.org/draft/2019-09/schema"},
	draft2020: {"draft 2020-12", "https://json-schema.org/draft/2020-12/schema"},
}

// draftSpan is, for each checking keyword not every draft reads, the first
// and last draft that reads it. "dependencies", "definitions" and "$defs"
// are read (or reached by "$ref") in every draft, and "$recursiveRef" in
// 2020-12 too (as a "$ref": 2020-12's metaschema makes "$recursiveAnchor" a
// string, which the compiler does not read). "$dynamicAnchor" is read in
// every draft but does something only with 2020-12's "$dynamicRef".
var draftSpan = map[string][2]int{
	"id":                    {draft4, draft4},
	"$id":                   {draft6, draft2020},
	"const":                 {draft6, draft2020},
	"contains":              {draft6, draft2020},
	"propertyNames":         {draft6, draft2020},
	"if":                    {draft7, draft2020},
	"then":                  {draft7, draft2020},
	"else":                  {draft7, draft2020},
	"additionalItems":       {draft4, draft2019},
	"$anchor":               {draft2019, draft2020},
	"$vocabulary":           {draft2019, draft2020},
	"$recursiveRef":         {draft2019, draft2020},
	"$recursiveAnchor":      {draft2019, draft2019},
	"dependentRequired":     {draft2019, draft2020},
	"dependentSchemas":      {draft2019, draft2020},
	"minContains":           {draft2019, draft2020},
	"maxContains":           {draft2019, draft2020},
	"unevaluatedProperties": {draft2019, draft2020},
	"unevaluatedItems":      {draft2019, draft2020},
	"prefixItems":           {draft2020, draft2020},
	"$dynamicRef":           {draft2020, draft2020},
	"$dynamicAnchor":        {draft2020, draft2020},
}

// draftInstead is what to write instead of a keyword in drafts that do not
// read it, by keyword and draft (0: any draft that does not).
var draftInstead = map[string]map[int]string{
	"id":                    {0: `write "$id"`},
	"$id":                   {0: `write "id" (draft-04's name for it)`},
	"const":                 {0: `write "enum" with the one value`},
	"if":                    {0: `write the cases as "oneOf" or "anyOf" branches`},
	"then":                  {0: `write the cases as "oneOf" or "anyOf" branches`},
	"else":                  {0: `write the cases as "oneOf" or "anyOf" branches`},
	"additionalItems":       {0: `write "items" beside "prefixItems" ("items": false ends the tuple)`},
	"$anchor":               {0: `write "$id": "#name" (this draft's anchor)`},
	"$recursiveRef":         {0: `write "$ref"`},
	"$recursiveAnchor":      {draft2020: `write "$dynamicAnchor", and "$dynamicRef" for the "$recursiveRef"`, 0: `drop it`},
	"dependentRequired":     {0: `write "dependencies" with the list of names`},
	"dependentSchemas":      {0: `write "dependencies" with the schema`},
	"unevaluatedProperties": {0: `write "additionalProperties" beside the "properties" it closes`},
	"unevaluatedItems":      {0: `write "additionalItems" beside "items" as an array`},
	"prefixItems":           {0: `write "items" as an array, and "additionalItems" to say what may follow`},
	"$dynamicRef":           {draft2019: `write "$recursiveRef"`, 0: `write "$ref"`},
	"$dynamicAnchor":        {draft2019: `write "$recursiveAnchor": true`, 0: `drop it`},
}

// draftOfDocument is the draft the compiler reads doc (a document's root)
// in: its "$schema" when that names a draft (as the compiler matches it),
// 2020-12 when it has none (CompileSchema's default), and 0 when it names
// another document (a metaschema, whose draft the compiler takes) or is not
// a string.
func draftOfDocument(doc any) int {
	m, _ := doc.(map[string]any)
	v, ok := m["$schema"]
	if !ok {
		return draft2020
	}
	u, _ := v.(string)
	if rest, ok := strings.CutPrefix(u, "http://"); ok {
		u = "https://" + rest
	}
	if i := strings.IndexByte(u, '#'); i >= 0 && (u[i:] == "#" || u[i:] == "#/") {
		u = u[:i]
	}
	switch u {
	case "https://json-schema.org/schema", "https://json-schema.org/draft/2020-12/schema":
		return draft2020
	case "https://json-schema.org/draft/2019-09/schema":
		return draft2019
	case "https://json-schema.org/draft-07/schema":
		return draft7
	case "https://json-schema.org/draft-06/schema":
		return draft6
	case "https://json-schema.org/draft-04/schema":
		return draft4
	}
	return 0
}

// unreadInDraft says why the compiler does not read the keyword k of m, a
// schema of draft (not 0), and what to write instead; "" when it reads it.
func unreadInDraft(k string, m map[string]any, draft int) string {
	if _, isRef := m["$ref"]; isRef && draft < draft2019 && slices.Contains(checkingKeywords, k) {
		switch k {
		case "$ref", "$schema", "definitions", "$defs": // read, or reached by a "$ref" pointer
		case "$id", "id", "$comment":
			// Ignored too, but they check nothing: a draft-07 root's
			// "$id" beside its "$ref" is the usual way to write one, and a
			// "$ref" that needed the "$id" fails to compile, saying so.
		default:
			return fmt.Sprintf(`%s ignores every keyword beside "$ref": put the "$ref" and %q in an "allOf" of two schemas, or set "$schema" to %q`,
				draftNames[draft].name, k, draftNames[draft2020].url)
		}
	}
	if span, ok := draftSpan[k]; ok && (draft < span[0] || draft > span[1]) {
		instead := draftInstead[k][draft]
		if instead == "" {
			instead = draftInstead[k][0]
		}
		use := fmt.Sprintf(`set "$schema" to %q (%s and later read it)`, draftNames[span[0]].url, draftNames[span[0]].name)
		if span[1] < draft2020 {
			use = fmt.Sprintf(`set "$schema" to %q (%s and earlier read it)`, draftNames[span[1]].url, draftNames[span[1]].name)
		}
		if instead == "" {
			return use
		}
		return instead + ", or " + use
	}
	// Read only beside another keyword, in every draft.
	if _, withIf := m["if"]; (k == "then" || k == "else") && !withIf {
		return `it applies only beside "if": add the "if" it answers, or drop it`
	}
	if _, tuple := m["items"].([]any); k == "additionalItems" && !tuple {
		return `it applies only beside "items" as an array (a tuple), and "items" as one schema already applies to every element: drop it`
	}
	return ""
}
