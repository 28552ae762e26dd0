package ops

import (
	"encoding/json"
	"strings"

	"github.com/routerhq/router/internal/store"
)

// outputNames are the property names a prompt's output schema declares
// (under "properties" or "required", at any depth): the operator's text,
// which the dashboard may show in a violation's path.
type outputNames map[string]bool

// outputNames returns the names j's prompt declares, read once per prompt
// version into seen; nil for a job with no prompt (a chat completion, whose
// schema is the caller's) or whose version this replica has not loaded.
func (s *Server) outputNames(j *store.Job, seen map[string]outputNames) outputNames {
	if s.prompts == nil || j.PromptVersion == "" {
		return nil
	}
	key := j.Operation + "@" + j.PromptVersion
	if names, ok := seen[key]; ok {
		return names
	}
	var names outputNames
	if p, err := s.prompts.Get(j.Operation, j.PromptVersion); err == nil {
		schema := []byte(p.FormatText()) // self-contained, when sent to providers
		if len(schema) == 0 {
			schema = p.OutputSchema
		}
		var doc any
		if json.Unmarshal(schema, &doc) == nil {
			names = outputNames{}
			names.collect(doc)
		}
	}
	seen[key] = names
	return names
}

func (n outputNames) collect(x any) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			switch props := v.(type) {
			case map[string]any:
				if k == "properties" {
					for name := range props {
						n[name] = true
					}
				}
			case []any:
				if k == "required" {
					for _, name := range props {
						if s, ok := name.(string); ok {
							n[s] = true
						}
					}
				}
			}
			n.collect(v)
		}
	case []any:
		for _, v := range x {
			n.collect(v)
		}
	}
}

// ownPathRules are the contract rules whose paths are the prompt's own
// pointers (rules.yaml), with array indexes for its wildcards: never a key
// taken from the output.
var ownPathRules = map[string]bool{"enum": true, "range": true, "equal": true, "product": true, "sum": true}

// shownPath is a violation's path as the dashboard shows it. Other rules'
// paths can name the output's own keys (no_extra_keys,
// schema.additionalProperties, json.duplicate_key, a schema keyword under
// additionalProperties, a custom rule's): such a path keeps its array indexes
// and the names the prompt declares, and shows any other segment as "*", so
// that no tenant's data (an output keyed by names, e-mail addresses, ids)
// reaches the page.
func shownPath(rule, path string, names outputNames) string {
	if path == "$" || ownPathRules[rule] {
		return path
	}
	if !strings.HasPrefix(path, "/") {
		return ""
	}
	segs := strings.Split(path[1:], "/")
	for i, seg := range segs {
		if !isIndex(seg) && !names[unescapeSeg(seg)] {
			segs[i] = "*"
		}
	}
	return "/" + strings.Join(segs, "/")
}

// isIndex reports whether seg reads as an array index: digits without a
// leading zero, short enough for any output's array. A longer number is
// shown as "*": it can be a key holding data (a card or phone number).
func isIndex(seg string) bool {
	if seg == "" || len(seg) > 6 || (seg[0] == '0' && len(seg) > 1) {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return false
		}
	}
	return true
}

// unescapeSeg undoes a JSON pointer segment's escapes (RFC 6901).
func unescapeSeg(seg string) string {
	if !strings.Contains(seg, "~") {
		return seg
	}
	return strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
}
