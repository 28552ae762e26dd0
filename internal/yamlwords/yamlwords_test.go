package yamlwords

import (
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestValue(t *testing.T) {
	for _, c := range []struct{ tag, value, want string }{
		{"!!seq", "", "a list"}, {"!!map", "", "a mapping"}, {"!!str", "x", `the text "x"`},
		{"!!null", "", "null"}, {"!!int", "5", "the number 5"}, {"!!float", "1.5", "the number 1.5"},
		{"!!bool", "true", "bool true"},
	} {
		if got := Value(c.tag, c.value); got != c.want {
			t.Errorf("Value(%q, %q) = %q, want %q", c.tag, c.value, got, c.want)
		}
	}
}

func TestTopFieldAtAndEmptyDocument(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("a: 1\nb:\n  - x\n  - y\nc: 2\n"), &doc); err != nil {
		t.Fatal(err)
	}
	top := doc.Content[0]
	for line, want := range map[int]string{1: "a", 3: "b", 4: "b", 5: "c"} {
		if got := TopFieldAt(top, line); got != want {
			t.Errorf("line %d: %q, want %q", line, got, want)
		}
	}
	if EmptyDocument(&doc) {
		t.Error("a document with a mapping is not empty")
	}
	var empty yaml.Node
	if err := yaml.Unmarshal([]byte("---\n"), &empty); err != nil {
		t.Fatal(err)
	}
	if !EmptyDocument(&empty) {
		t.Errorf("--- alone is empty: %+v", empty)
	}
}

func TestFields(t *testing.T) {
	type s struct {
		B int `yaml:"b"`
		A int `yaml:"a,omitempty"`
		C int `yaml:"-"`
		D int
	}
	if got := Fields(reflect.TypeFor[s]()); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("Fields = %v", got)
	}
}

func TestGoType(t *testing.T) {
	named := map[string]string{"map[string]int": "a mapping of pointers to whole numbers"}
	for typ, want := range map[string]string{
		"int": "a whole number", "uint8": "a whole number", "float64": "a number", "string": "text",
		"bool": "true or false", "[]string": "a list", "map[string]any": "a mapping",
		"map[string]int": "a mapping of pointers to whole numbers", "*prompt.Rules": "a mapping",
		"other.Thing": "other.Thing",
	} {
		if got := GoType(typ, named, "prompt."); got != want {
			t.Errorf("GoType(%q) = %q, want %q", typ, got, want)
		}
	}
}
