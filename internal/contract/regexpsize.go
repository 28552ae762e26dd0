package contract

import "regexp/syntax"

// What a pattern costs once compiled is not its length: "x{1000}" is 7
// characters and 1,000 instructions, and "\pL" is 3 characters and a class
// of about 1,300 runes. The bounds (MaxSchemaPatternSize) and the cache's
// estimate of what a compiled schema holds (regexpFootprint) both measure
// it here, from the parse tree, in time linear in the pattern's length:
// nothing is compiled.

// parsePattern parses a pattern as the compiler does (jsonschema/v5 compiles
// "pattern" and "patternProperties" names with regexp.Compile, whose flags
// are syntax.Perl).
func parsePattern(src string) (*syntax.Regexp, error) {
	return syntax.Parse(src, syntax.Perl)
}

// patternSize is what re compiles to, in the unit of MaxSchemaPatternSize:
// its instructions plus the runes of its character classes — and, for a
// pattern Go may also compile to a one-pass program (mayBeOnePass), the
// copies of its classes' runes that program holds (onePassRunes), when they
// are more: "^\pL{900}$" holds 900 copies of \pL, about 7 MB, where
// "\pL{900}" holds one.
func patternSize(re *syntax.Regexp) int64 {
	insts, runes := regexpInsts(re), classRunes(re)
	if insts < onePassMaxInsts && mayBeOnePass(re) {
		runes = max(runes, onePassRunes(re))
	}
	return insts + runes
}

// onePassMaxInsts is the size (regexpInsts) from which Go's regexp surely
// makes no one-pass program: it makes none of a program of 1,000
// instructions or more (regexp/onepass.go), but regexpInsts counts more than
// the program holds for some patterns ("^(ab|cd){142}$": 1,141, and one-pass),
// so twice that.
const onePassMaxInsts = 2000

// mayBeOnePass says whether Go's regexp may compile re to a one-pass program
// as well: only a pattern whose program starts anchored at the beginning of
// the text (a leading ^ or \A, outside any alternation) can be one. It says
// yes to some that are not (the program must also never have to choose),
// which only counts their class copies when it need not.
func mayBeOnePass(re *syntax.Regexp) bool {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op == syntax.OpConcat && len(re.Sub) > 0 {
		re = re.Sub[0]
		for re.Op == syntax.OpCapture {
			re = re.Sub[0]
		}
	}
	return re.Op == syntax.OpBeginText
}

// sizeCeiling bounds the sizes counted below, which multiply along nested
// repetitions and alternations: far past any bound, and far from overflow.
const sizeCeiling = int64(1) << 40

// regexpInsts is the number of instructions re compiles to, as
// regexp/syntax counts them to refuse a pattern too large (calcSize in its
// parse.go): a repetition x{n,m} is m copies of x.
func regexpInsts(re *syntax.Regexp) int64 {
	var n int64
	switch re.Op {
	case syntax.OpLiteral:
		n = int64(len(re.Rune))
	case syntax.OpCapture, syntax.OpStar:
		n = 2 + regexpInsts(re.Sub[0])
	case syntax.OpPlus, syntax.OpQuest:
		n = 1 + regexpInsts(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			n += regexpInsts(sub)
		}
		n += int64(len(re.Sub))
	case syntax.OpRepeat:
		sub := regexpInsts(re.Sub[0])
		if re.Max == -1 {
			n = 2 + int64(max(re.Min, 1))*sub
		} else {
			n = int64(re.Max)*sub + int64(re.Max-re.Min)
		}
	}
	return max(1, n)
}

// classRunes counts the runes of re's character classes, each class once:
// the copies a repetition makes share them.
func classRunes(re *syntax.Regexp) int64 {
	n := int64(0)
	if re.Op == syntax.OpCharClass {
		n = int64(len(re.Rune))
	}
	for _, sub := range re.Sub {
		n += classRunes(sub)
	}
	return n
}

// onePassRunes counts the runes a one-pass program of re holds beyond its
// instructions: a one-pass program (one anchored at both ends that never
// has to choose, like "^[0-9a-f]{8}$") gives each instruction of a class
// its own copy of the class's runes, and each choice (of a repetition, an
// optional part or an alternation) the union of what its branches start
// with, counted here as all their runes. "^\pL{900}$" holds 900 copies of
// \pL's 1,318 runes; "\pL{900}" one.
func onePassRunes(re *syntax.Regexp) int64 {
	var n int64
	switch re.Op {
	case syntax.OpCharClass:
		n = int64(len(re.Rune))
	case syntax.OpCapture:
		n = onePassRunes(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		n = 2 * onePassRunes(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			n += onePassRunes(sub)
		}
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			n += onePassRunes(sub)
		}
		n *= int64(len(re.Sub))
	case syntax.OpRepeat:
		sub := onePassRunes(re.Sub[0])
		if re.Max == -1 {
			n = int64(max(re.Min, 1))*sub + sub
		} else {
			n = int64(re.Max)*sub + int64(re.Max-re.Min)*sub
		}
	}
	return min(n, sizeCeiling)
}

// classRuneCap is classRunes by the capacity of each class's slice, which
// is what the program keeps: a class merged from others ("[\p{L}\p{N}]")
// is built by appending, and holds up to twice its runes.
func classRuneCap(re *syntax.Regexp) int64 {
	n := int64(0)
	if re.Op == syntax.OpCharClass {
		n = int64(cap(re.Rune))
	}
	for _, sub := range re.Sub {
		n += classRuneCap(sub)
	}
	return n
}
