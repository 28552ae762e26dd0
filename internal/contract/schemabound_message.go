package contract

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	rfcproblem "github.com/routerhq/router/internal/problem"
)

// jsonschema/v5 compares a number with "minimum", "maximum",
// "exclusiveMinimum" and "exclusiveMaximum" exactly, but writes the bound
// in its message as a float64: "must be >= 9.007199254740992e+15 but found
// 9007199254740992" for a minimum of 9007199254740993, "must be <= +Inf"
// for 1e400. A violation of a caller's or a prompt's schema quotes the
// bound exactly instead, as a decimal: 9007199254740993,
// 100.00000000000000001, 1e400.

// boundOps is what the library's message says before each bound.
var boundOps = map[string]string{
	"minimum": "must be >=", "exclusiveMinimum": "must be >",
	"maximum": "must be <=", "exclusiveMaximum": "must be <",
}

// Its "enum" and "const" messages print the values with Go's %#v ("value
// must be one of "R&D", "1", <nil>"), or none ("const failed" for an
// object): they are written from the schema's values instead, as JSON.

// Its "pattern" message quotes the expression Go-escaped ("does not match
// pattern '^[^\\r\\n]*$'") and says nothing of what the value is for: it
// quotes the expression as it reads, after the subschema's "description"
// when a prompt's schema gives one, so the schema can say how to fix the
// value ("must be one line: put the details in body").

// boundTexts holds a compiled schema's subschemas that have bounds, by
// their location (the library's AbsoluteKeywordLocation of a bound is that
// location and "/minimum"; the key is the library's own string, so the map
// holds no copy of it), and each bound's decimal text once it was needed: a
// bound may be 1e100000, whose text costs about as much to write as the
// compiler took to read it, so it is written once, not once a violation.
type boundTexts struct {
	nodes map[string]*jsonschema.Schema
	texts sync.Map // boundKey → decimal text
}

type boundKey struct {
	node *jsonschema.Schema
	kw   string
}

// newBoundTexts collects g's subschemas that have bounds, an "enum", a
// "const" or a "pattern"; nil when there are none.
func newBoundTexts(g *schemaGraph) *boundTexts {
	var b *boundTexts
	for _, s := range g.nodes {
		if s.Minimum == nil && s.ExclusiveMinimum == nil && s.Maximum == nil && s.ExclusiveMaximum == nil && len(s.Enum) == 0 && len(s.Constant) == 0 && s.Pattern == nil {
			continue
		}
		if b == nil {
			b = &boundTexts{nodes: map[string]*jsonschema.Schema{}}
		}
		b.nodes[s.Location] = s
	}
	return b
}

// bound is the bound kw of s.
func bound(s *jsonschema.Schema, kw string) *big.Rat {
	switch kw {
	case "minimum":
		return s.Minimum
	case "exclusiveMinimum":
		return s.ExclusiveMinimum
	case "maximum":
		return s.Maximum
	case "exclusiveMaximum":
		return s.ExclusiveMaximum
	}
	return nil
}

// message is ve's message, a bound's violation (kw) quoting the bound as a
// decimal; ve's own message when the bound is not one b holds.
func (b *boundTexts) message(ve *jsonschema.ValidationError, kw string) string {
	if b == nil {
		return ve.Message
	}
	loc, isKw := strings.CutSuffix(ve.AbsoluteKeywordLocation, kw)
	loc, slash := strings.CutSuffix(loc, "/")
	isKw = isKw && slash
	if kw == "enum" || kw == "const" {
		if s := b.nodes[loc]; isKw && s != nil && (kw == "enum" && len(s.Enum) > 0 || kw == "const" && len(s.Constant) > 0) {
			return b.text(boundKey{s, kw}, valuesText)
		}
		return ve.Message
	}
	if kw == "pattern" {
		if s := b.nodes[loc]; isKw && s != nil && s.Pattern != nil {
			return b.text(boundKey{s, kw}, patternText)
		}
		return ve.Message
	}
	op, isBound := boundOps[kw]
	if !isBound {
		return ve.Message
	}
	_, found, hasFound := strings.Cut(ve.Message, " but found ")
	s := b.nodes[loc]
	if !isKw || !hasFound || s == nil || bound(s, kw) == nil {
		return ve.Message
	}
	return op + " " + b.text(boundKey{s, kw}, func(k boundKey) string { return decimalText(bound(k.node, k.kw)) }) + " but found " + found
}

// text is the text of key, written by write the first time it is needed.
func (b *boundTexts) text(key boundKey, write func(boundKey) string) string {
	text, done := b.texts.Load(key)
	if !done {
		text, _ = b.texts.LoadOrStore(key, write(key))
	}
	return text.(string)
}

// maxEnumShown is how many of an enum's values its message lists.
const maxEnumShown = 20

// valuesText is the message of a failed "enum" or "const" (key.kw): the
// values as JSON, each clipped, an enum's first maxEnumShown of them.
func valuesText(key boundKey) string {
	if key.kw == "const" {
		return "value must be " + rfcproblem.Clip(display(key.node.Constant[0]))
	}
	vals := key.node.Enum
	parts := make([]string, 0, min(len(vals), maxEnumShown)+1)
	for _, v := range vals[:min(len(vals), maxEnumShown)] {
		parts = append(parts, rfcproblem.Clip(display(v)))
	}
	if len(vals) > maxEnumShown {
		parts = append(parts, fmt.Sprintf("and %d more", len(vals)-maxEnumShown))
	}
	return "value must be one of [" + strings.Join(parts, ", ") + "]"
}

// patternText is the message of a failed "pattern": the subschema's
// description when it has one (a prompt's schema: a caller's is compiled
// without annotations), then the expression as written, each clipped.
func patternText(key boundKey) string {
	msg := "does not match the pattern `" + rfcproblem.Clip(key.node.Pattern.String()) + "`"
	if d := strings.TrimSpace(key.node.Description); d != "" {
		return rfcproblem.Clip(d) + " (" + msg + ")"
	}
	return msg
}

// decimalText writes r, a decimal (its denominator divides a power of ten,
// as every JSON number's does), exactly: plainly when its first digit is
// within 10^-6 to 10^20 (9007199254740993, 100.00000000000000001, 0.0001),
// else with an exponent (1e400, -2.5e-9). Another r is written as a
// fraction (1/3).
func decimalText(r *big.Rat) string {
	num, den := r.Num(), r.Denom()
	// den = 2^a·5^b divides 10^k for every k ≥ max(a, b).
	a := den.TrailingZeroBits()
	fives := new(big.Int).Rsh(den, a)
	k := max(a, uint(float64(fives.BitLen())/2.32)+1)
	if den.IsInt64() && den.Int64() == 1 {
		k = 0
	}
	scaled := new(big.Int).Mul(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil))
	q, m := new(big.Int).QuoRem(scaled, den, new(big.Int))
	if m.Sign() != 0 {
		return r.RatString()
	}
	digits := q.String()
	sign := ""
	if digits[0] == '-' {
		sign, digits = "-", digits[1:]
	}
	t := strings.TrimRight(digits, "0")
	if t == "" {
		return "0"
	}
	exp := len(digits) - len(t) - int(k) // r = t × 10^exp
	lead := len(t) - 1 + exp             // the power of ten of t's first digit
	switch {
	case lead < -6 || lead > 20:
		m := t[:1]
		if len(t) > 1 {
			m += "." + t[1:]
		}
		return sign + m + "e" + strconv.Itoa(lead)
	case exp >= 0:
		return sign + t + strings.Repeat("0", exp)
	case len(t)+exp > 0:
		p := len(t) + exp
		return sign + t[:p] + "." + t[p:]
	}
	return sign + "0." + strings.Repeat("0", -(len(t)+exp)) + t
}
