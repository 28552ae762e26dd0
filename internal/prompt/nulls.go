package prompt

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// errNestedNullPrinted is a template printing an array or object that holds
// a null, through {{ .key }}, printf, print or println: fmt writes it as
// "[vip <nil>]" or "map[name:<nil>]", which would reach the model. render
// adds where the nulls are.
var errNestedNullPrinted = errors.New(`the template prints an array or object with a null in it, which would print as "<nil>"`)

// holdsNull reports whether v, a decoded input value, is an array or object
// with a null anywhere inside it.
func holdsNull(v any) bool {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if e == nil || holdsNull(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if isNull(e) || holdsNull(e) {
				return true
			}
		}
	}
	return false
}

// maxNullPaths bounds how many places an error lists.
const maxNullPaths = 5

// nullPaths lists where data, the input's decoded object, holds a null: its
// top-level keys whose value is null (absent optional keys included), then
// the nulls inside arrays and objects (tags[1], customer.name), each sorted;
// at most maxNullPaths, then "..."; "a nested value" when there are none
// (cannot happen for an error that calls it).
func nullPaths(data map[string]any) string {
	var keys, nested []string
	for k, v := range data {
		if isNull(v) {
			keys = append(keys, k)
		} else {
			nestedNullPaths(v, k, &nested)
		}
	}
	sort.Strings(keys)
	sort.Strings(nested)
	all := append(keys, nested...)
	if len(all) == 0 {
		return "a nested value"
	}
	if len(all) > maxNullPaths {
		all = append(all[:maxNullPaths], "...")
	}
	return strings.Join(all, ", ")
}

func nestedNullPaths(v any, at string, out *[]string) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			p := fmt.Sprintf("%s[%d]", at, i)
			if e == nil {
				*out = append(*out, p)
			} else {
				nestedNullPaths(e, p, out)
			}
		}
	case map[string]any:
		for k, e := range x {
			p := at + "." + k
			if e == nil {
				*out = append(*out, p)
			} else {
				nestedNullPaths(e, p, out)
			}
		}
	}
}

// withNestedNulls adds to err, which is errNestedNullPrinted, where data
// holds nulls, and what to write instead.
func withNestedNulls(err error, data map[string]any) error {
	return fmt.Errorf(`%w (null or absent here: %s); print it with {{ json .key }}, where a null stays null, or print its elements`, err, nullPaths(data))
}

// printedNull returns an error for an argument of fn (printf, print,
// println) that is null or holds one, or nil.
func printedNull(fn string, args []any) error {
	for i, a := range args {
		switch {
		case isNull(a):
			return fmt.Errorf("%s: argument %d: %w", fn, i+1, errNullPrinted)
		case holdsNull(a):
			return fmt.Errorf("%s: argument %d: %w", fn, i+1, errNestedNullPrinted)
		}
	}
	return nil
}
