package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// CheckRules applies only the business rules to a decoded document (numbers as
// json.Number, see ParseJSON), in this order: no_extra_keys, enums, ranges, equal,
// products, sums, custom. It does not check the schema. Past MaxViolations, the
// first ones are listed and a last violation, rule RuleTruncated, says how many
// more there were.
func (v *Validator) CheckRules(doc any) []Violation {
	var out ruleViolations
	if v.noExtraKeys {
		v.checkExtraKeys(doc, &out)
	}
	for _, e := range v.enums {
		resolve(doc, e.ptr.segs, "$", func(p string, x any) {
			for _, a := range e.allowed {
				if sameValue(x, a) {
					return
				}
			}
			if !out.skip() {
				out.add(Violation{Rule: "enum", Path: p, Message: fmt.Sprintf("%s is not one of %s", display(x), displayList(e.allowed))})
			}
		})
	}
	for _, r := range v.ranges {
		resolve(doc, r.ptr.segs, "$", func(p string, x any) {
			if msg := outOfRange(x, r); msg != "" {
				out.add(Violation{Rule: "range", Path: p, Message: msg})
			}
		})
	}
	for _, e := range v.equal {
		l, ok1 := lookupOne(doc, e.left.segs)
		r, ok2 := lookupOne(doc, e.right.segs)
		if ok1 && ok2 && !sameValue(l, r) {
			out.add(Violation{Rule: "equal", Path: e.left.raw, Message: fmt.Sprintf("must equal %s: got %s, %s is %s", e.right.raw, display(l), e.right.raw, display(r))})
		}
	}
	for _, p := range v.products {
		p.check(doc, &out)
	}
	for _, s := range v.sums {
		s.check(doc, &out)
	}
	for _, c := range v.custom {
		c.run(doc, &out)
	}
	return out.result()
}

func (v *Validator) checkExtraKeys(doc any, out *ruleViolations) {
	m, ok := doc.(map[string]any)
	if !ok {
		return
	}
	var extra []string
	for k := range m {
		if !v.declared[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		out.add(Violation{Rule: "no_extra_keys", Path: joinPath("$", k), Message: fmt.Sprintf("key %q is not declared in the output schema", k)})
	}
}

// number reads a numeric field of an item; present=false when it is absent or
// null (null is the schema's to allow or refuse).
func number(item map[string]any, key, at string, rule string, out *ruleViolations) (f float64, present, ok bool) {
	f, _, present, ok = numberOf(item, key, at, rule, out)
	return f, present, ok
}

// numberOf is number that also returns the value as the document holds it
// (a json.Number: its text), for the exact decision (see withinTol).
func numberOf(item map[string]any, key, at string, rule string, out *ruleViolations) (f float64, x any, present, ok bool) {
	x, present = item[key]
	if !present || x == nil {
		return 0, nil, false, false
	}
	f, ok = toFloat(x)
	if !ok {
		out.add(Violation{Rule: rule, Path: joinPath(at, key), Message: mustBeNumber(x)})
	}
	return f, x, true, ok
}

func (p productCheck) check(doc any, out *ruleViolations) {
	arr, _ := lookupArray(doc, p.items)
	tol, tolOK := fixedOf(p.tol) // once per rule, for the exact decision
	for i, el := range arr {
		item, ok := el.(map[string]any)
		if !ok {
			continue
		}
		at := joinPath(p.items.raw, strconv.Itoa(i))
		res, resRaw, present, ok := numberOf(item, p.result, at, "product", out)
		if !present || !ok {
			continue
		}
		prod, parts, complete := 1.0, make([]string, 0, len(p.factors)), true
		raws, lost, zero := make([]any, 0, len(p.factors)), false, false
		for _, f := range p.factors {
			x, raw, present, ok := numberOf(item, f, at, "product", out)
			if !present || !ok {
				complete = false
				break
			}
			prod *= x
			zero = zero || x == 0
			lost = lost || underflows(prod, !zero) || subnormal(x)
			raws = append(raws, raw)
			parts = append(parts, fmtNum(x))
		}
		if !complete {
			continue
		}
		// Each factor read and each multiplication rounds once.
		errBound := float64(2*len(raws)+2) * unitRoundoff * (math.Abs(res) + math.Abs(prod))
		if lost || subnormal(res) {
			errBound = math.Inf(1) // float64 cannot tell: decide exactly
		}
		if ok, _ := withinTol(res, prod, p.tol, errBound, func() (bool, bool) {
			r, ok1 := fixedOf(resRaw)
			q, ok2 := fixedProduct(raws)
			if !ok1 || !ok2 || !tolOK {
				return false, false
			}
			d, ok := r.sub(q)
			return ok && d.absAtMost(tol), ok
		}, func() (*big.Rat, bool) {
			r, ok1 := exactNumber(resRaw)
			q, ok2 := exactProduct(raws)
			if !ok1 || !ok2 {
				return nil, false
			}
			return r.Sub(r, q), true
		}); ok || out.skip() {
			continue
		}
		what := strings.Join(p.factors, " * ")
		if overflows(prod) {
			out.add(Violation{Rule: "product", Path: joinPath(at, p.result), Message: fmt.Sprintf(
				"%s is %s but %s = %s overflows a 64-bit float, so this rule cannot compare it",
				p.result, fmtNum(res), what, strings.Join(parts, " * "))})
			continue
		}
		out.add(Violation{Rule: "product", Path: joinPath(at, p.result), Message: fmt.Sprintf(
			"%s is %s but %s = %s = %s (tolerance %s)",
			p.result, fmtNum(res), what, strings.Join(parts, " * "), fmtNum(prod), fmtNum(p.tol))})
	}
}

func (s sumCheck) check(doc any, out *ruleViolations) {
	tv, found := lookupOne(doc, s.total.segs)
	if !found || tv == nil {
		return
	}
	total, ok := toFloat(tv)
	if !ok {
		out.add(Violation{Rule: "sum", Path: s.total.raw, Message: mustBeNumber(tv)})
		return
	}
	arr, found := lookupArray(doc, s.items)
	if !found {
		return
	}
	sum, abs, complete, lost := 0.0, 0.0, true, false
	var terms [][2]any // each item's field, and multiply when set (else nil), as written
	for i, el := range arr {
		item, ok := el.(map[string]any)
		if !ok {
			continue
		}
		at := joinPath(s.items.raw, strconv.Itoa(i))
		x, raw, present, ok := numberOf(item, s.field, at, "sum", out)
		if !ok {
			complete = complete && !present
			continue
		}
		term := [2]any{raw}
		lost = lost || subnormal(x)
		if s.multiply != "" {
			m, mraw, present, ok := numberOf(item, s.multiply, at, "sum", out)
			if !ok {
				complete = complete && !present
				continue
			}
			lost = lost || underflows(x*m, x != 0 && m != 0) || subnormal(m)
			x *= m
			term[1] = mraw
		}
		terms = append(terms, term)
		sum += x
		abs += math.Abs(x)
	}
	if !complete {
		return // a non-number was reported; the sum would be noise
	}
	// Each term is read (and multiplied) with at most three roundings, and
	// adding n terms rounds each partial sum, at most Σ|term|, once.
	errBound := float64(len(terms)+4)*unitRoundoff*abs + unitRoundoff*math.Abs(total)
	if lost || subnormal(total) {
		errBound = math.Inf(1) // float64 cannot tell: decide exactly
	}
	fast := func() (bool, bool) {
		d, ok := fixedOf(tv)
		tol, tolOK := fixedOf(s.tol)
		if !ok || !tolOK {
			return false, false
		}
		for _, t := range terms {
			x, ok := fixedProduct(t[:1+min(1, len(s.multiply))])
			if !ok {
				return false, false
			}
			if d, ok = d.sub(x); !ok {
				return false, false
			}
		}
		return d.absAtMost(tol), true
	}
	exact := func() (*big.Rat, bool) {
		d, ok := exactNumber(tv)
		if !ok {
			return nil, false
		}
		for _, t := range terms {
			x, ok := exactProduct(t[:1+min(1, len(s.multiply))])
			if !ok {
				return nil, false
			}
			d.Sub(d, x)
		}
		return d, true
	}
	within, diff := withinTol(total, sum, s.tol, errBound, fast, exact)
	if within {
		return
	}
	off := total - sum
	if diff == nil && !overflows(sum) {
		diff, _ = exact() // for the message: float64's difference can be off by more than a cent
	}
	if diff != nil {
		off = ratFloat(diff)
	}
	what := s.items.raw + "/*/" + s.field
	if s.multiply != "" {
		what += " * " + s.multiply
	}
	if overflows(sum) {
		out.add(Violation{Rule: "sum", Path: s.total.raw, Message: fmt.Sprintf(
			"is %s but the sum of %s over %d items overflows a 64-bit float, so this rule cannot compare it",
			fmtNum(total), what, len(arr))})
		return
	}
	out.add(Violation{Rule: "sum", Path: s.total.raw, Message: fmt.Sprintf(
		"is %s but the sum of %s over %d items is %s (off by %s, tolerance %s)",
		fmtNum(total), what, len(arr), fmtNum(sum), fmtNum(off), fmtNum(s.tol))})
}

// overflows reports whether a computed product or sum left the float64 range
// (±Inf, or NaN from adding +Inf and -Inf).
func overflows(f float64) bool { return math.IsInf(f, 0) || math.IsNaN(f) }

// mustBeNumber says why x, which toFloat refused, cannot be computed with.
func mustBeNumber(x any) string {
	if n, big := x.(json.Number); big {
		return tooBig(n)
	}
	return "must be a number, got " + typeName(x)
}

// tooBig describes a JSON number beyond float64 (1e400): rules cannot compute
// with it.
func tooBig(n json.Number) string {
	s := string(n)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return "number " + s + " is too large for this rule to compare (beyond a 64-bit float)"
}

func lookupArray(doc any, p pointer) ([]any, bool) {
	x, found := lookupOne(doc, p.segs)
	arr, ok := x.([]any)
	return arr, found && ok
}

func (c customCheck) run(doc any, out *ruleViolations) {
	rule := "custom:" + c.name
	defer func() {
		if r := recover(); r != nil {
			out.add(Violation{Rule: rule, Path: "$", Message: fmt.Sprintf("rule panicked: %v", r)})
		}
	}()
	for _, v := range c.fn(doc) {
		v.Rule = rule
		if v.Path == "" {
			v.Path = "$"
		}
		out.add(v)
	}
}

func displayList(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = display(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
