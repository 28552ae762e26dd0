package contract

import "testing"

// A failed "pattern" quotes the expression as it reads (the library wrote
// it Go-escaped: '^[^\\r\\n]*$'), after the description of a prompt's
// schema, which can say how to fix the value. A caller's schema is compiled
// without annotations: its description is not quoted.
func TestSchemaPatternMessage(t *testing.T) {
	const described = `{"type":"object","properties":{"s":{"type":"string","description":"must be one line: put the details in body","pattern":"^[^\\r\\n]*$"}}}`
	const plain = `{"type":"object","properties":{"s":{"type":"string","pattern":"^[^\\r\\n]*$"}}}`
	const out = `{"s":"a\nb"}`
	for _, c := range []struct{ name, schema, want string }{
		{"described", described, "schema.pattern at /s: must be one line: put the details in body (does not match the pattern `^[^\\r\\n]*$`)"},
		{"plain", plain, "schema.pattern at /s: does not match the pattern `^[^\\r\\n]*$`"},
	} {
		if got := checkWC3(t, c.schema, out); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	s, err := CompileRequestSchema([]byte(described), "request")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := ParseJSON([]byte(out))
	if vs := s.Check(doc); len(vs) != 1 || vs[0].Message != "does not match the pattern `^[^\\r\\n]*$`" {
		t.Errorf("a caller's schema: got %v, want the pattern without the description", vs)
	}
}
