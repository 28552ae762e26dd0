package contract

import (
	"bytes"
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
// first number of doc (a ParseJSON value of the text b), in the answer's
// order, whose decimal point is more than MaxTextExponent digits from its
// written digits, or whose exponent brings the exponents of doc's numbers
// beyond MaxTextExponents in all; nil when there is none. Whether there is
// one does not depend on the order the numbers are read in, so doc's maps
// (in Go's random order) answer that; only then is b read again, in order,
// for the first such number, so the violation's path is the same from run
// to run for one answer.
func textNumberViolation(doc any, b []byte) []Violation {
	var n numberBudget
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
			return n.judge(string(x), path)
		}
		return nil
	}
	bad := walk(doc, "$")
	if bad == nil {
		return nil
	}
	if first := firstNumberViolation(b); first != nil {
		bad = first
	}
	return []Violation{*bad}
}

// numberBudget judges the numbers of one answer for textNumberViolation,
// adding up their exponents.
type numberBudget struct{ total int }

// judge returns the violation for the number s at path, or nil.
func (n *numberBudget) judge(s, path string) *Violation {
	reach, exp, ok := decimalReach(s)
	n.total += exp
	if ok && reach <= MaxTextExponent && n.total <= MaxTextExponents {
		return nil
	}
	why := fmt.Sprintf("its decimal point is more than %d digits from its digits", MaxTextExponent)
	if ok && reach <= MaxTextExponent {
		why = fmt.Sprintf("the exponents of the answer's numbers add up to more than %d", MaxTextExponents)
	}
	return &Violation{Rule: "json.number_range", Path: path, Message: fmt.Sprintf(
		"the number %s is too large to judge against the schema: %s (the router reads a number exactly to check it); "+
			"ask for smaller numbers, or for the number as a string", cutNumber(s), why)}
}

// firstNumberViolation is the walk of textNumberViolation over the JSON text
// b in its written order: the first number it refuses, or nil (b does not
// parse, or has none).
func firstNumberViolation(b []byte) *Violation {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var n numberBudget
	var walk func(path string) (*Violation, error)
	walk = func(path string) (*Violation, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case json.Delim:
			if t != '{' && t != '[' {
				return nil, fmt.Errorf("unexpected %v", t)
			}
			for i := 0; dec.More(); i++ {
				at := joinPath(path, strconv.Itoa(i))
				if t == '{' {
					k, err := dec.Token()
					if err != nil {
						return nil, err
					}
					key, _ := k.(string)
					at = joinPath(path, key)
				}
				if bad, err := walk(at); bad != nil || err != nil {
					return bad, err
				}
			}
			_, err := dec.Token() // the closing delimiter
			return nil, err
		case json.Number:
			return n.judge(string(t), path), nil
		}
		return nil, nil
	}
	bad, _ := walk("$")
	return bad
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
