package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// A range bound is compared with a number by exact decimal value, like enums
// and equal: as a float64, -1e-400 reads as -0 and passes min 0, and
// 100.00000000000000001 reads as 100 and passes max 100. A bound decoded from
// YAML keeps its text as written (Range.UnmarshalYAML); one set in Go keeps
// the shortest decimal that reads back as its float64 (0.1 is "0.1").

// UnmarshalYAML decodes min and max keeping the decimal text of each as
// written, so that max: 100.00000000000000001 is not rounded to 100. Its
// errors read as those of strict decoding: a key other than min and max is
// refused as an unknown field, a value that is not a number as a type error.
func (r *Range) UnmarshalYAML(n *yaml.Node) error {
	var plain struct {
		Min *float64 `yaml:"min"`
		Max *float64 `yaml:"max"`
	}
	// Decoding into plain reports a value of the wrong type and a repeated
	// key in the words of the strict decoder; unknown keys are checked below,
	// as Node.Decode does not inherit the caller's KnownFields.
	var errs []string
	if err := n.Decode(&plain); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return err
		}
		errs = te.Errors
	}
	*r = Range{Min: plain.Min, Max: plain.Max}
	for _, kv := range mergedEntries(n) {
		k, val := kv[0], kv[1]
		var f *float64
		var lit *string
		switch k.Value {
		case "min":
			f, lit = r.Min, &r.minLit
		case "max":
			f, lit = r.Max, &r.maxLit
		default:
			errs = append(errs, fmt.Sprintf("line %d: field %s not found in type contract.Range", k.Line, k.Value))
			continue
		}
		if f == nil {
			continue // null, or a value of the wrong type (reported above)
		}
		if val.Kind == yaml.AliasNode && val.Alias != nil {
			val = val.Alias
		}
		if t := val.ShortTag(); t != "!!int" && t != "!!float" || math.IsInf(*f, 0) {
			continue // min: -.inf and max: .inf are open bounds (compileRange)
		}
		s, err := YAMLNumber(val.Value)
		if err != nil {
			errs = append(errs, fmt.Sprintf("line %d: value `%s` %v", val.Line, val.Value, err))
			continue
		}
		// Kept only when the float64 is not the bound's exact value, so
		// that the messages and the prompt's digest of an ordinary bound
		// (0, 0.5) stay as they were.
		*f, _ = strconv.ParseFloat(s, 64)
		if !decimalEqual(strconv.FormatFloat(*f, 'g', -1, 64), s) {
			*lit = s
		}
	}
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	return nil
}

// mergedEntries lists a mapping's key/value pairs as YAML reads them: its
// own, then those its merge keys (<<: *a, or <<: [*a, *b]) bring in that it
// does not set itself, the earlier merged mapping first. A bound that came
// through a merge key was read as a float64 only (max: 100.00000000000000001
// became 100).
func mergedEntries(n *yaml.Node) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	seen := map[string]bool{}
	var walk func(m *yaml.Node, depth int)
	walk = func(m *yaml.Node, depth int) {
		if m.Kind == yaml.AliasNode && m.Alias != nil {
			m = m.Alias
		}
		if m.Kind != yaml.MappingNode || depth > 32 { // deeper is a cycle yaml.v3 refuses
			return
		}
		var merges []*yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, val := m.Content[i], m.Content[i+1]
			if k.ShortTag() == "!!merge" {
				merges = append(merges, val)
				continue
			}
			if !seen[k.Value] {
				seen[k.Value] = true
				out = append(out, [2]*yaml.Node{k, val})
			}
		}
		for _, v := range merges {
			if v.Kind == yaml.SequenceNode {
				for _, e := range v.Content {
					walk(e, depth+1)
				}
				continue
			}
			walk(v, depth+1)
		}
	}
	walk(n, 0)
	return out
}

// Written returns the text of each bound as written in YAML where its
// float64 (Min, Max) is not its exact value ("100.00000000000000001"), and ""
// where it is, where the bound was set in Go or changed since, or is open. A
// digest of the rules needs it: two such bounds can share a float64.
func (r Range) Written() (min, max string) {
	if r.Min != nil && r.minLit != "" && boundText(r.Min, r.minLit) == json.Number(r.minLit) {
		min = r.minLit
	}
	if r.Max != nil && r.maxLit != "" && boundText(r.Max, r.maxLit) == json.Number(r.maxLit) {
		max = r.maxLit
	}
	return min, max
}

// boundText is the decimal text a bound is compared by: as written in YAML
// when it was decoded from there and has not been changed since, else the
// shortest decimal that reads back as its float64. "" for an open bound.
func boundText(f *float64, lit string) json.Number {
	if f == nil {
		return ""
	}
	if lit != "" {
		if g, _ := strconv.ParseFloat(lit, 64); g == *f {
			return json.Number(lit)
		}
	}
	return json.Number(strconv.FormatFloat(*f, 'g', -1, 64))
}

// compileRange checks a range's bounds and returns them as decimal text.
func compileRange(r Range) (lo, hi json.Number, err error) {
	switch {
	case r.Min == nil && r.Max == nil:
		return "", "", errors.New("set min, max or both")
	case r.Min != nil && math.IsNaN(*r.Min) || r.Max != nil && math.IsNaN(*r.Max):
		return "", "", errors.New("min and max must be numbers")
	case r.Min != nil && math.IsInf(*r.Min, 1) || r.Max != nil && math.IsInf(*r.Max, -1):
		return "", "", errors.New("no number is within min +Inf or max -Inf; leave the bound out for a range open on that side")
	}
	// min -Inf and max +Inf (YAML's -.inf and .inf) are open bounds.
	if r.Min != nil && !math.IsInf(*r.Min, -1) {
		lo = boundText(r.Min, r.minLit)
	}
	if r.Max != nil && !math.IsInf(*r.Max, 1) {
		hi = boundText(r.Max, r.maxLit)
	}
	if lo == "" && hi == "" {
		return "", "", errors.New("set min, max or both (-.inf and .inf leave a side open)")
	}
	if lo != "" && hi != "" {
		c, ok := CompareNumbers(lo, hi)
		if !ok {
			return "", "", fmt.Errorf("min %s or max %s is not a number this rule can compare (an exponent beyond ±10^15)", lo, hi)
		}
		if c > 0 {
			return "", "", fmt.Errorf("min %s is greater than max %s", lo, hi)
		}
	}
	for _, b := range []json.Number{lo, hi} {
		if _, ok := CompareNumbers(b, 0); b != "" && !ok {
			return "", "", fmt.Errorf("bound %s is not a number this rule can compare (an exponent beyond ±10^15)", b)
		}
	}
	return lo, hi, nil
}

// outOfRange says how x breaks the range, "" when it does not: a number by its
// exact decimal value, a string by its length in characters, an array by its
// number of items.
func outOfRange(x any, r rangeCheck) string {
	var val any
	var shown, what string
	switch t := x.(type) {
	case nil:
		return "" // null is the schema's to allow or refuse, like an absent value
	case string:
		n := utf8.RuneCountInString(t)
		val, shown, what = n, strconv.Itoa(n), "length"
	case []any:
		val, shown, what = len(t), strconv.Itoa(len(t)), "item count"
	default:
		lit, ok := numLiteral(x)
		if !ok {
			return fmt.Sprintf("range applies to numbers, strings and arrays, got %s", typeName(x))
		}
		val, shown, what = x, shortLiteral(lit), "value"
	}
	if r.min != "" {
		c, ok := CompareNumbers(val, r.min)
		if !ok {
			return uncomparable(x)
		}
		if c < 0 {
			return fmt.Sprintf("%s %s is below the minimum %s", what, shown, r.min)
		}
	}
	if r.max != "" {
		c, ok := CompareNumbers(val, r.max)
		if !ok {
			return uncomparable(x)
		}
		if c > 0 {
			return fmt.Sprintf("%s %s is above the maximum %s", what, shown, r.max)
		}
	}
	return ""
}

// uncomparable says why a number could not be compared with a bound: its
// exponent is beyond what the exact comparison reads (±10^15), or it is a Go
// float that is not finite.
func uncomparable(x any) string {
	lit, _ := numLiteral(x)
	return "number " + shortLiteral(lit) + " cannot be compared with the bounds of this range (its exponent is beyond ±10^15, or it is not finite)"
}

// shortLiteral cuts a long number literal for a message.
func shortLiteral(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
