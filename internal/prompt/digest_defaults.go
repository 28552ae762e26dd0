package prompt

import (
	"slices"

	"github.com/routerhq/router/internal/contract"
)

// maxToleranceSpellings bounds the product and sum rules at the default
// tolerance whose spellings are taken one by one (2^n digests at load); past
// it, only writing the default on all of them or on none counts as the same
// content (equivalentDigests).
const maxToleranceSpellings = 6

// equivalentDigests is the digests of p's content written otherwise with
// the same judgement: each product or sum rule at the default tolerance
// (contract.DefaultTolerance, unset or written as 0.01, 0.010 or 1e-2) with
// `tolerance: 0.01` written or left out. p.Digest is the digest of the
// rules as written (unchanged, so every run recorded for a prompt keeps
// counting for it); these let a run recorded against another of those
// spellings count too (Prompt.SameContent). Nil when p has no such rule.
func equivalentDigests(p *Prompt, inputSchema []byte, outputRefs, inputRefs []refFile) []string {
	rules := p.Rules
	rules.Products = slices.Clone(p.Rules.Products)
	rules.Sums = slices.Clone(p.Rules.Sums)
	var tols []**float64 // the rules at the default tolerance
	for i := range rules.Products {
		if atDefault(rules.Products[i].Tolerance) {
			tols = append(tols, &rules.Products[i].Tolerance)
		}
	}
	for i := range rules.Sums {
		if atDefault(rules.Sums[i].Tolerance) {
			tols = append(tols, &rules.Sums[i].Tolerance)
		}
	}
	if len(tols) == 0 {
		return nil
	}
	def := contract.DefaultTolerance
	var out []string
	spell := func(written func(i int) bool) {
		for i, t := range tols {
			*t = nil
			if written(i) {
				*t = &def
			}
		}
		if d := digestWithRules(p, rules, inputSchema, outputRefs, inputRefs); d != p.Digest && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(tols) > maxToleranceSpellings {
		spell(func(int) bool { return false })
		spell(func(int) bool { return true })
		return out
	}
	for m := range 1 << len(tols) {
		spell(func(i int) bool { return m&(1<<i) != 0 })
	}
	return out
}

// atDefault reports whether a product or sum rule's tolerance is the
// default: unset, or written as its value.
func atDefault(t *float64) bool { return t == nil || *t == contract.DefaultTolerance }

// SameContent reports whether a conformance run recorded against the prompt
// content ran (its prompt_digest) is of p's content now, as the gate judges
// it: ran is p.Digest, or the digest of p with a product or sum rule's
// default tolerance written or left out (equivalentDigests: writing a
// default does not change the judgement), or either digest is unknown (a
// legacy run, or a Prompt not loaded by LoadDir; store.SamePromptContent).
func (p *Prompt) SameContent(ran string) bool {
	return ran == "" || p.Digest == "" || ran == p.Digest || slices.Contains(p.sameDigests, ran)
}
