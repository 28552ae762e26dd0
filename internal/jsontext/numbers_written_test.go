package jsontext

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// written is the length of what PostgreSQL 15 writes out for each number
// stored in jsonb (length(n::jsonb::text), read from a server; internal/api's
// TestNumberWrittenLengthAgreesWithPostgreSQL checks more against the one the
// tests run on): plain decimal without an exponent, the scale as sent less
// the exponent, no sign on zero.
func TestWrittenIsTheLengthPostgreSQLWritesOut(t *testing.T) {
	for tok, want := range map[string]int64{
		`1e131000`: 131001, `0e-5`: 7, `-0`: 1, `-0.0`: 3, `1.5e-1`: 4, `15e-3`: 5, `1.23e1`: 4,
		`123.456e7`: 10, `0.001e2`: 3, `-1e-3`: 6, `5e-324`: 326, `1e308`: 309, `0.000e5`: 1,
		`0.0e-2`: 5, `-0e-3`: 5, `1.10e1`: 4, `100e-2`: 4, `1e-16383`: 16385, `0.5e-10`: 13,
		`12.50`: 5, `-7`: 2, `0`: 1,
	} {
		n, ok := parseNumber([]byte(tok))
		if !ok || n.outOfRange() != "" {
			t.Fatalf("%s: not a number in range", tok)
		}
		if got := n.written(); got != want {
			t.Errorf("written(%s) = %d, want %d", tok, got, want)
		}
	}
}

// 1e131000 fits numeric, but PostgreSQL writes it out as a 1 and 131000
// zeros whenever the JSON is read: 800 of them in a 7 KB request read back
// as 105 MB. A number may take at most MaxNumberGrowth characters more
// written out than as sent.
func TestCheckNumbersRefusesANumberWrittenOutTooLong(t *testing.T) {
	e := CheckNumbers([]byte(`{"schema":{"x-note":[1,1e131000]}}`))
	if e == nil || !e.Long || e.Path != "schema.x-note[1]" || e.Number != "1e131000" || e.Offset != 23 ||
		e.Reason != "is written out in 131001 characters, 130993 more than as sent" {
		t.Fatalf("CheckNumbers = %+v, want the number 1e131000 at schema.x-note[1], too long", e)
	}
	msg := e.Error()
	for _, want := range []string{"1e131000", "schema.x-note[1]", "131001 characters", "without an exponent", "1000 characters", "1048576"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q: want %q in it", msg, want)
		}
	}
	// The bound, on both sides of it: 1e1005 is 1006 characters, 1000 more
	// than its 6; 1e-1005 is 1007, 1000 more than its 7.
	for in, bad := range map[string]bool{
		`1e1005`: false, `1e1006`: true, `-1e1005`: false, `-1e1006`: true, `1e-1005`: false, `1e-1006`: true,
		`0e-1005`: false, `0e-1006`: true, `12345.6789e1010`: false, `12345.6789e1011`: true,
		`1` + strings.Repeat("0", 5000) + `e1000`: false, `1` + strings.Repeat("0", 5000) + `e1006`: true,
		`[1e1006]`: true, `{"a":"1e131000"}`: false, `{"a":"x","1e1006":true}`: false,
	} {
		if got := CheckNumbers([]byte(in)) != nil; got != bad {
			t.Errorf("CheckNumbers(%.40q) refused=%v, want %v", in, got, bad)
		}
	}
}

// Every float64, however it is spelt, and long decimals written without an
// exponent pass: they take at most about 330 characters more written out.
func TestCheckNumbersKeepsEveryFloat64AndLongDecimals(t *testing.T) {
	var nums []string
	for _, f := range []float64{math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
		2.2250738585072014e-308, 1e308, 1e-300, 0.1, 1.5e-7, 6.02214076e23} {
		nums = append(nums, strconv.FormatFloat(f, 'e', -1, 64), strconv.FormatFloat(f, 'e', 40, 64), strconv.FormatFloat(f, 'E', -1, 64))
	}
	nums = append(nums, `3.14159265358979323846264338327950288419716939937510582097494459`, `0.000000000000000000000000000000000001`,
		strings.Repeat("9", 5000)+"."+strings.Repeat("1", 5000), "-0."+strings.Repeat("0", 16382)+"1")
	doc := "[" + strings.Join(nums, ",") + "]"
	if e := CheckNumbers([]byte(doc)); e != nil {
		t.Fatalf("CheckNumbers = %v, want nil", e)
	}
}

// The numbers of one text may grow by at most MaxTextGrowth characters in
// all: 1e999 grows by 995 (1000 characters written out, 5 sent), so 1053 of
// them pass and the 1054th is refused, named. Look-alikes in strings do not
// count.
func TestCheckNumbersBoundsWhatATextsNumbersGrowBy(t *testing.T) {
	many := func(n int, num string) string { return strings.TrimSuffix(strings.Repeat(num+",", n), ",") }
	if e := CheckNumbers([]byte(`{"a":[` + many(1053, "1e999") + `]}`)); e != nil {
		t.Fatalf("1053 × 1e999 (%d characters more): %v, want nil", 1053*995, e)
	}
	e := CheckNumbers([]byte(`{"a":[` + many(1054, "1e999") + `]}`))
	if e == nil || !e.Long || e.Path != "a[1053]" || e.Number != "1e999" || !strings.Contains(e.Reason, "1048730 characters") {
		t.Fatalf("1054 × 1e999: %+v, want the 1054th named", e)
	}
	if e := CheckNumbers([]byte(`{"s":"` + many(3000, "1e999") + `","n":[` + many(1000, "1e999") + `]}`)); e != nil {
		t.Fatalf("look-alikes in a string counted: %v", e)
	}
	// Numbers that grow by a few characters each: 100000 of them pass.
	if e := CheckNumbers([]byte(`[` + many(100000, "1.234e-10") + `]`)); e != nil {
		t.Fatalf("100000 × 1.234e-10: %v, want nil", e)
	}
}

// The hot path reads eight bytes at a time: a number is found wherever it
// starts and ends relative to them, and in the last bytes.
func TestCheckNumbersFindsANumberAtEveryAlignment(t *testing.T) {
	for pad := 0; pad < 20; pad++ {
		for _, num := range []string{`1e1006`, `1.5E+1010`, `1e-1006`, `1` + strings.Repeat("0", 131072), `0.` + strings.Repeat("0", 16383) + `1`} {
			for _, after := range []string{``, `]`, `,2]`, `,"abcdefghijklmnop"]`} {
				in := `[` + strings.Repeat(" ", pad) + num + after
				if after == `` {
					in = strings.Repeat(" ", pad) + num
				}
				if CheckNumbers([]byte(in)) == nil {
					t.Errorf("CheckNumbers(%d spaces, %.12s…, %q) = nil", pad, num, after)
				}
			}
		}
	}
}

// digitBytes and eBytes mark exactly the digits and the e's of a word,
// whatever the bytes beside them.
func TestByteMasksAreExact(t *testing.T) {
	for c := 0; c < 256; c++ {
		for _, fill := range []byte{0, '0', '9', 'e', 'E', 0x7f, 0x80, 0xff, byte(c ^ 0xff)} {
			for pos := 0; pos < 8; pos++ {
				var w [8]byte
				for k := range w {
					w[k] = fill
				}
				w[pos] = byte(c)
				d, e := digitBytes(binary.LittleEndian.Uint64(w[:])), eBytes(binary.LittleEndian.Uint64(w[:]))
				for k := range w {
					if got := d>>(8*k)&0xff == 0x80; got != isDigit(w[k]) {
						t.Fatalf("digitBytes(% x) byte %d = %v", w, k, got)
					}
					if got := e>>(8*k)&0xff == 0x80; got != (w[k] == 'e' || w[k] == 'E') {
						t.Fatalf("eBytes(% x) byte %d = %v", w, k, got)
					}
					if d>>(8*k)&0x7f != 0 || e>>(8*k)&0x7f != 0 {
						t.Fatalf("masks of % x set bits beside bit 7", w)
					}
				}
			}
		}
	}
}

// The hot path and the walk of the whole text agree on texts full of numbers
// with exponents, in strings and out, near both bounds: a number the hot
// path passes over cannot be too long, and what it counts is at least what
// the numbers outside strings grow by.
func TestCheckNumbersAgreesWithFullScanOnManyNumbers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	number := func(maxExp int) string {
		s := strconv.Itoa(r.IntN(100))
		if r.IntN(2) == 0 {
			s = "-" + s
		}
		if r.IntN(2) == 0 {
			s += "." + strconv.Itoa(r.IntN(1000))
		}
		e := []string{"e", "E", "e+", "e-", "E-"}[r.IntN(5)]
		return s + e + strconv.Itoa(r.IntN(maxExp))
	}
	refused := map[bool]int{} // by Long and whether alone
	for range 300 {
		var b strings.Builder
		b.WriteString(`{"a":[`)
		n := 1000 + r.IntN(2500)
		long := -1 // the one number that may be too long alone
		if r.IntN(3) == 0 {
			long = r.IntN(n)
		}
		for i := 0; i < n; i++ {
			maxExp := 1001
			if i == long {
				maxExp = 1020
			}
			if i > 0 {
				b.WriteString(strings.Repeat(" ", r.IntN(3)) + ",")
			}
			if r.IntN(4) == 0 {
				b.WriteString(`"x` + number(maxExp) + `"`)
			} else {
				b.WriteString(number(maxExp))
			}
		}
		b.WriteString(`]}`)
		text := []byte(b.String())
		fast, full := CheckNumbers(text), scanNumbers(text, false)
		if (fast == nil) != (full == nil) || fast != nil && *fast != *full {
			t.Fatalf("CheckNumbers = %+v, the full scan = %+v", fast, full)
		}
		if fast != nil {
			refused[strings.HasPrefix(fast.Reason, "brings")]++
		}
	}
	if refused[true] == 0 || refused[false] == 0 || refused[true]+refused[false] == 300 {
		t.Fatalf("refused for a number alone %d times, for the text's total %d, of 300: the texts do not straddle the bounds", refused[false], refused[true])
	}
}
