package store_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/store"
)

// FuzzFingerprint: Fingerprint never panics, and for any input it accepts,
// the same value written with other key order and whitespace (and its
// compact and indented forms) has the same fingerprint, while another
// operation or route does not.
func FuzzFingerprint(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":1,"b":[1,2]}`, "{ \"b\": [1, 2],\n \"a\": 1 }", `{"a":{"z":null,"y":[true,false,"s"]}}`,
		`{"n":1.0,"m":1e3,"k":-0}`, `{"a":"\u0041\n\"q\""}`, `{"a":1,"a":2}`, `[1,{"b":2,"a":1}]`, `"x"`, `12`,
		`{"deep":[[[[[[[[[[{}]]]]]]]]]]}`, `{"a":`, `nul`, `{"<\u0001>":"&"}`, ``, "{\"\xff\":1}",
	} {
		f.Add([]byte(seed), uint8(0))
	}
	f.Fuzz(func(t *testing.T, input []byte, ws uint8) {
		fp, err := store.Fingerprint("triage", "1", "default", input)
		if err != nil {
			return
		}
		if len(fp) != 32 {
			t.Fatalf("fingerprint of %d bytes", len(fp))
		}
		dec := json.NewDecoder(bytes.NewReader(input))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("Fingerprint accepted what does not decode: %v", err)
		}
		// The canonical form is what encoding/json's Marshal writes.
		canonicalIsMarshal(t, v)
		// The API decodes a job's input once (contract.ParseJSON) for its
		// schema and its fingerprint: FingerprintValue of that value is
		// Fingerprint of the bytes.
		if pv, err := contract.ParseJSON(input); err == nil {
			if got, err := store.FingerprintValue("triage", "1", "default", pv); err != nil || !bytes.Equal(got, fp) {
				t.Fatalf("FingerprintValue of the parsed input %x (%v), Fingerprint of its bytes %x", got, err, fp)
			}
		}
		var compact, indented bytes.Buffer
		if json.Compact(&compact, input) == nil {
			same(t, "compact", fp, compact.Bytes())
		}
		if json.Indent(&indented, input, "", "\t") == nil {
			same(t, "indented", fp, indented.Bytes())
		}
		var w bytes.Buffer
		writeReordered(&w, v, ws)
		same(t, "reordered", fp, w.Bytes())
		other, err := store.Fingerprint("invoice", "1", "default", input)
		if err != nil || bytes.Equal(other, fp) {
			t.Fatalf("another operation: same fingerprint or error %v", err)
		}
		other, _ = store.Fingerprint("triage", "1", "other", input)
		if bytes.Equal(other, fp) {
			t.Fatal("another route: same fingerprint")
		}
	})
}

// canonicalIsMarshal fails t unless store.Canonical writes for input what
// encoding/json's Marshal writes, or fails as it does.
func canonicalIsMarshal(t *testing.T, input any) {
	t.Helper()
	want, werr := json.Marshal(map[string]any{"operation": "tri<a>ge", "prompt_version": "1\u2028", "route": "déf&ult", "input": input})
	got, err := store.Canonical("tri<a>ge", "1\u2028", "déf&ult", input)
	if fmt.Sprint(err) != fmt.Sprint(werr) || !bytes.Equal(got, want) {
		t.Fatalf("canonical form of %#v:\n%s (%v)\nencoding/json:\n%s (%v)", input, got, err, want, werr)
	}
}

// The canonical form of values no decoder gives (nil maps and slices, an
// empty or malformed json.Number, a float64, a map of another type) is
// encoding/json's too, errors included.
func TestCanonicalIsMarshal(t *testing.T) {
	for _, v := range []any{
		nil, true, "<\u2028\xff>", json.Number(""), json.Number("abc"), json.Number("-0.5e+3"), json.Number("01"),
		map[string]any(nil), []any(nil), map[string]any{"b": []any{}, "a": map[string]any{}, "\xff": 1.5, "&": nil},
		[]any{json.Number("1"), float64(2), "x"}, map[string]string{"a": "b"}, []any{map[string]any{"z": json.Number("x")}},
	} {
		canonicalIsMarshal(t, v)
	}
}

func same(t *testing.T, form string, want []byte, input []byte) {
	t.Helper()
	got, err := store.Fingerprint("triage", "1", "default", input)
	if err != nil {
		t.Fatalf("%s form %q: %v", form, input, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s form %q has another fingerprint", form, input)
	}
}

// writeReordered writes v as JSON with object keys in reverse order and
// whitespace chosen by ws; numbers keep their spelling.
func writeReordered(w *bytes.Buffer, v any, ws uint8) {
	space := []string{"", " ", "\n", "\t ", "\r\n  "}[int(ws)%5]
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		w.WriteString("{" + space)
		for i, k := range keys {
			if i > 0 {
				w.WriteString(space + "," + space)
			}
			writeKey(w, k) // another escaping of the same string
			w.WriteString(space + ":" + space)
			writeReordered(w, x[k], ws/5)
		}
		w.WriteString(space + "}")
	case []any:
		w.WriteString("[" + space)
		for i, e := range x {
			if i > 0 {
				w.WriteString("," + space)
			}
			writeReordered(w, e, ws/5)
		}
		w.WriteString(space + "]")
	case json.Number:
		w.WriteString(x.String())
	default:
		b, _ := json.Marshal(x)
		w.Write(b)
	}
}

// writeKey writes k without HTML escaping (the canonical form escapes <, >, &).
func writeKey(w *bytes.Buffer, k string) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(k)
	w.Truncate(w.Len() - 1) // Encode's newline
}
