package contract

import (
	"fmt"
	"math"
)

// Rules is the declarative business contract of a prompt. It is decoded from the
// `rules:` block of prompt.yaml (or from JSON) and compiled by NewValidator.
//
// Paths are JSON pointers into the output (/total, /line_items). Enums and Ranges
// may use "*" for every element of an array (/line_items/*/quantity). A value a
// rule points at that is absent is skipped: presence is the schema's job
// ("required").
type Rules struct {
	// NoExtraKeys rejects top-level keys that the output schema does not declare in
	// its top-level "properties" (those beside a top-level "$ref" and in "allOf"
	// members count), even where additionalProperties admits them. Unset means
	// true; write `no_extra_keys: false` to allow extra keys.
	NoExtraKeys *bool `yaml:"no_extra_keys,omitempty" json:"no_extra_keys,omitempty"`
	// AllowFenced accepts an output wrapped in one markdown code fence
	// (```json ... ``` or ``` ... ```) by judging the JSON inside. Unset means
	// true; with `allow_fenced: false` a fenced output fails with rule json.fenced.
	AllowFenced *bool `yaml:"allow_fenced,omitempty" json:"allow_fenced,omitempty"`
	// Enums maps a path to the values allowed there (rule "enum"). Numbers
	// compare by exact decimal value. Decoded from prompt.yaml, values are read
	// as written (see YAMLValue): 2024-01-01 is the string, a number keeps all
	// its digits.
	Enums map[string][]any `yaml:"enums,omitempty" json:"enums,omitempty"`
	// Ranges maps a path to inclusive bounds (rule "range"). For a number the bounds
	// apply to its value, for a string to its length in characters, for an array to
	// its number of items.
	Ranges map[string]Range `yaml:"ranges,omitempty" json:"ranges,omitempty"`
	// Equal lists pairs of paths whose values must be equal (rule "equal").
	Equal []EqualRule `yaml:"equal,omitempty" json:"equal,omitempty"`
	// Products checks, for every element of an array, that one numeric field equals
	// the product of others (rule "product"), e.g. amount = quantity * unit_price.
	Products []ProductRule `yaml:"products,omitempty" json:"products,omitempty"`
	// Sums checks that a numeric field summed over an array equals a total (rule
	// "sum").
	Sums []SumRule `yaml:"sums,omitempty" json:"sums,omitempty"`
	// Custom names Go rules registered with Register (rule "custom:<name>"); a
	// name listed twice runs once.
	Custom []string `yaml:"custom,omitempty" json:"custom,omitempty"`
}

// Range holds inclusive bounds; a nil bound is open. A number is compared
// with a bound by exact decimal value: a bound decoded from YAML by the text
// written there (Range.UnmarshalYAML), a bound set in Go by the shortest
// decimal that reads back as its float64 (0.1 is 0.1, so 0.10000000000000001
// is above it).
type Range struct {
	Min *float64 `yaml:"min,omitempty" json:"min,omitempty"`
	Max *float64 `yaml:"max,omitempty" json:"max,omitempty"`

	// minLit and maxLit are the bounds as written in YAML ("" when set in
	// Go); one is used only while Min or Max still holds its float64 value.
	minLit, maxLit string
}

// EqualRule requires the values at Left and Right to be equal (numbers compare by
// exact decimal value, so 10 equals 10.0 and 9007199254740993 does not equal
// 9007199254740992). Paths must not contain "*".
type EqualRule struct {
	Left  string `yaml:"left" json:"left"`
	Right string `yaml:"right" json:"right"`
}

// ProductRule requires, for each element of the array at Items, that the element's
// Result field equals the product of its Factors fields, within Tolerance
// (unset: DefaultTolerance; 0: exactly). The tolerance is absolute and exact:
// the numbers compare as the decimals they are written as (see tolerance.go).
type ProductRule struct {
	Items     string   `yaml:"items" json:"items"`
	Result    string   `yaml:"result" json:"result"`
	Factors   []string `yaml:"factors" json:"factors"`
	Tolerance *float64 `yaml:"tolerance,omitempty" json:"tolerance,omitempty"`
}

// SumRule requires the sum over the array at Items of each element's Field
// (multiplied by its Multiply field when set) to equal the number at Total,
// within Tolerance (unset: DefaultTolerance; 0: exactly), absolute and exact
// as for ProductRule.
type SumRule struct {
	Items     string   `yaml:"items" json:"items"`
	Field     string   `yaml:"field" json:"field"`
	Multiply  string   `yaml:"multiply,omitempty" json:"multiply,omitempty"`
	Total     string   `yaml:"total" json:"total"`
	Tolerance *float64 `yaml:"tolerance,omitempty" json:"tolerance,omitempty"`
}

// DefaultTolerance is the absolute tolerance of product and sum rules that do not
// set one: one cent.
const DefaultTolerance = 0.01

// NoExtraKeysEnabled reports the effective no_extra_keys setting (default true).
func (r Rules) NoExtraKeysEnabled() bool { return r.NoExtraKeys == nil || *r.NoExtraKeys }

// AllowFencedEnabled reports the effective allow_fenced setting (default true).
func (r Rules) AllowFencedEnabled() bool { return r.AllowFenced == nil || *r.AllowFenced }

// tolerance is the effective tolerance of a rule, or an error for one that is
// negative or not a finite number.
func tolerance(t *float64) (float64, error) {
	switch {
	case t == nil:
		return DefaultTolerance, nil
	case !(*t >= 0) || math.IsInf(*t, 1): // NaN too
		return 0, fmt.Errorf("%v: must be a number, 0 or more (0: exactly; unset: %v)", *t, DefaultTolerance)
	}
	return *t, nil
}
