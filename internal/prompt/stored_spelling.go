package prompt

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/routerhq/router/internal/jsontext"
)

// storedSpelling returns data, the decoded JSON object input, with its
// numbers in the spelling PostgreSQL's jsonb gives them back in
// (jsontext.WrittenOut: 1e300 is a 1 and 300 zeros, -0 is 0), and whether
// any was spelt otherwise. A job's input is stored as jsonb, and a job
// rendered again from its row (a retry, recovery, a drain hand-over) sees
// that spelling: the first render, from the input as sent, sees it too, so
// every render of a job prints the same text and is held to its limits
// (MaxRenderedBytes, the context window its tokens are counted against)
// on the same length: a job accepted is never refused later for the
// length of its numbers. data is not modified: what changes is copied (the
// objects and arrays on the way to a number spelt otherwise). An input
// without an exponent or a negative zero (jsontext.MayRespell, a read of
// the text eight bytes at a time) is not walked.
func storedSpelling(data map[string]any, input []byte) (map[string]any, bool) {
	if !jsontext.MayRespell(input) {
		return data, false
	}
	v, changed := respell(data)
	if !changed {
		return data, false
	}
	return v.(map[string]any), true
}

// respell returns v with its numbers spelt as jsonb writes them out, and
// whether any changed; v is copied only where something changes.
func respell(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		if s, ok := jsontext.WrittenOut(string(x)); ok {
			return json.Number(s), true
		}
	case map[string]any:
		var c map[string]any
		for k, e := range x {
			if r, ok := respell(e); ok {
				if c == nil {
					c = maps.Clone(x)
				}
				c[k] = r
			}
		}
		if c != nil {
			return c, true
		}
	case []any:
		var c []any
		for i, e := range x {
			if r, ok := respell(e); ok {
				if c == nil {
					c = slices.Clone(x)
				}
				c[i] = r
			}
		}
		if c != nil {
			return c, true
		}
	}
	return v, false
}
