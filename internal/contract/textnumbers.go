package contract

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// An answer judged by ValidateText is not stored as jsonb, so jsonb's bounds
// on numbers (jsontext.CheckNumbers) are not its bounds: {"n":1e2000} is a
// few characters of a string. But the schema check reads a number it
// compares (minimum, multipleOf, "integer") exactly, as a fraction of two
// integers (math/big), which costs time and memory in proportion to its
// exponent: 1e131072 takes about 16 ms, and an exponent beyond a million
// cannot be read at all. These bounds keep that cost small; a number past
// them is refused as json.number_range, the caller's rule, not the
// provider's (it says nothing of a target's health).
const (
	// MaxTextExponent is the largest exponent magnitude (counting where
	// the written digits put the decimal point) a number of an answer judged
	// by ValidateText may have: numeric's, so 1e131072 is taken.
	MaxTextExponent = 131072
	// MaxTextExponents is how large the exponents of one such answer's
	// numbers may be in all (1 MiB, as jsontext.MaxTextGrowth).
	MaxTextExponents = 1 << 20
)

// textNumberViolation returns the json.number_range violation for the
// first number of doc (a ParseJSON value) whose decimal point is more than
// MaxTextExponent digits from its written digits, or whose exponent brings
// the exponents of doc's numbers beyond MaxTextExponents in all; nil when
// there is none.
func textNumberViolation(doc any) []Violation {
	total := 0
	var walk func(v any, path string) *Violation
	walk = func(v any, path string) *Violation {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if bad := walk(e, joinPath(path, k)); bad != nil {
					return bad
				}
			}
		case []any:
			for i, e := range x {
				if bad := walk(e, joinPath(path, strconv.Itoa(i))); bad != nil {
					return bad
				}
			}
		case json.Number:
			reach, exp, ok := decimalReach(string(x))
			total += exp
			if ok && reach <= MaxTextExponent && total <= MaxTextExponents {
				return nil
			}
			why := fmt.Sprintf("its decimal point is more than %d digits from its digits", MaxTextExponent)
			if ok && reach <= MaxTextExponent {
				why = fmt.Sprintf("the exponents of the answer's numbers add up to more than %d", MaxTextExponents)
			}
			return &Violation{Rule: "json.number_range", Path: path, Message: fmt.Sprintf(
				"the number %s is too large to judge against the schema: %s (the router reads a number exactly to check it); "+
					"ask for smaller numbers, or for the number as a string", cutNumber(string(x)), why)}
		}
		return nil
	}
	if bad := walk(doc, "$"); bad != nil {
		return []Violation{*bad}
	}
	return nil
}

// decimalReach reads the JSON number s: reach is how many digits its value
// takes written out in full, before or after the decimal point (1e2000:
// 2001; 1.5e-7: 8; 12345: 5), exp the magnitude of its exponent (0 without
// one). ok is false when the exponent does not fit an int.
func decimalReach(s string) (reach, exp int, ok bool) {
	mant, e, hasExp := strings.Cut(strings.ToLower(s), "e")
	n := 0
	if hasExp {
		v, err := strconv.Atoi(e)
		if err != nil || v > 1<<40 || v < -(1<<40) {
			return 0, 0, false
		}
		n = v
	}
	whole, frac, _ := strings.Cut(strings.TrimPrefix(mant, "-"), ".")
	if n >= 0 {
		return max(len(whole)+n, len(frac)-n), n, true
	}
	return max(len(frac)-n, len(whole)), -n, true
}

// cutNumber is a number as written, cut to 40 characters for a message.
func cutNumber(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
