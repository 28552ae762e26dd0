package contract

import (
	"strings"
	"testing"
)

// An `equal` rule with a side left out names that side as missing. It was
// read as "" (the whole output) and refused for its type: `"/a" is a number
// and "" is an object`, naming a path no one wrote.
func TestEqualRuleMissingSideIsNamed(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`)
	_, err := NewValidator(schema, "x.json", Rules{Equal: []EqualRule{{Left: "/a"}, {Right: "/b"}}})
	if err == nil {
		t.Fatal("accepted an equal rule without right, and one without left")
	}
	for _, want := range []string{"equal[0].right: missing: name the path", "equal[1].left: missing: name the path"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), `""`) {
		t.Errorf("error names the empty path:\n%v", err)
	}
}
