package conformance

import "testing"

// lookup reads an array index only as RFC 6901 writes it: "01" and "+1"
// name no element (strconv.Atoi read both as 1), while an object's key
// "01" is found.
func TestLookupReadsOnlyRFC6901Indexes(t *testing.T) {
	doc := map[string]any{"a": []any{"zero", "one"}, "m": map[string]any{"01": "key"}}
	for p, want := range map[string]any{"/a/1": "one", "/a/0": "zero", "/m/01": "key"} {
		if got, ok := lookup(doc, p); !ok || got != want {
			t.Errorf("lookup(%s) = %v, %v; want %v", p, got, ok, want)
		}
	}
	for _, p := range []string{"/a/01", "/a/+1", "/a/-0", "/a/00"} {
		if got, ok := lookup(doc, p); ok {
			t.Errorf("lookup(%s) = %v; want no element", p, got)
		}
	}
}
