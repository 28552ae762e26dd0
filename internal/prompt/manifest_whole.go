package prompt

import (
	"fmt"
	"math"

	"go.yaml.in/yaml/v3"

	"github.com/routerhq/router/internal/yamlwords"
)

// yaml.v3 decodes a number with a fraction into an int by dropping the
// fraction, without an error: max_tokens: 100.5 was 100 and seed: 7.5 was 7.
// It also goes through a float64, so a number written with a fraction or an
// exponent past 2^53 loads rounded (seed: 9007199254740993.0 was
// 9007199254740992), a fraction too small for a float64 is lost
// (100.0000000000000001 was 100), and one below int's range loads as its
// least value. fractionFields judges each of the manifest's whole-number
// fields as written (decoding top again, so that one reached through a merge
// key is found where YAML puts it) and reports one that would not load as
// written as strict decoding reports a value of the wrong type. It returns
// the fields reported.
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
		if f.w.problem == "" {
			continue
		}
		report(f.name, "line %d: %s", f.w.line, f.w.problem)
		if bad == nil {
			bad = map[string]bool{}
		}
		bad[f.name] = true
	}
	return bad
}

// wholeNumber records a number written for a whole number that YAML would
// load as another number: its line and what is wrong ("" when nothing is).
type wholeNumber struct {
	line    int
	problem string
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (w *wholeNumber) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
		return nil // an !!int is read exactly
	}
	var loaded int
	if n.Decode(&loaded) != nil {
		return nil // refused by strict decoding, which reports it
	}
	written := yamlwords.Value("!!float", n.Value)
	v, st := exactWhole(n.Value)
	switch {
	case st == wholeUnread, st == wholeFraction:
		// 1e2 and 100.0 are whole; 100.5 and 1e-400 are not, nor -.inf.
		w.problem = fmt.Sprintf("%s, where %s is expected", written, yamlwords.GoType("int", nil))
	case st == wholeOutOfRange:
		w.problem = fmt.Sprintf("%s, where a whole number from %d to %d is expected", written, math.MinInt, math.MaxInt)
	case v != int64(loaded):
		w.problem = fmt.Sprintf("%s, which YAML reads as a float and would load as %d (a number written with a fraction "+
			"or an exponent is exact only up to 2^53, 9007199254740992): write it as an integer, %d", written, loaded, v)
	}
	if w.problem != "" {
		w.line = n.Line
	}
	return nil
}
