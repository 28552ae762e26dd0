package prompt

import (
	"math"

	"go.yaml.in/yaml/v3"

	"github.com/routerhq/router/internal/yamlwords"
)

// yaml.v3 decodes a number with a fraction into an int by dropping the
// fraction, without an error: max_tokens: 100.5 was 100 and seed: 7.5 was 7.
// fractionFields finds such a number for each of the manifest's whole-number
// fields (decoding top again, so that one reached through a merge key is
// found where YAML puts it) and reports it as strict decoding reports a value
// of the wrong type. It returns the fields reported.
func fractionFields(top *yaml.Node, report func(string, string, ...any)) map[string]bool {
	var whole struct { // the manifest's int fields
		MaxTokens wholeNumber `yaml:"max_tokens"`
		Seed      wholeNumber `yaml:"seed"`
	}
	_ = top.Decode(&whole) // what it refuses, strict decoding has reported
	var bad map[string]bool
	for _, f := range []struct {
		name string
		w    wholeNumber
	}{{"max_tokens", whole.MaxTokens}, {"seed", whole.Seed}} {
		if f.w.text == "" {
			continue
		}
		report(f.name, "line %d: %s, where %s is expected", f.w.line, yamlwords.Value("!!float", f.w.text), yamlwords.GoType("int", nil))
		if bad == nil {
			bad = map[string]bool{}
		}
		bad[f.name] = true
	}
	return bad
}

// wholeNumber records a number with a fraction written for a whole number:
// its line and text ("" when there is none).
type wholeNumber struct {
	line int
	text string
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (w *wholeNumber) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
		return nil
	}
	var f float64
	if n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) || f == math.Trunc(f) {
		return nil // 1e2 and 100.0 are whole; NaN and infinities are refused by strict decoding
	}
	w.line, w.text = n.Line, n.Value
	return nil
}
