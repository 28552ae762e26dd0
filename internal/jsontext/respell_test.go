package jsontext

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// WrittenOut is PostgreSQL's spelling of a number stored in jsonb (values
// read from a server; internal/api's TestWrittenOutIsPostgreSQLsSpelling
// checks many more against the one the tests run on), and as long as written
// says.
func TestWrittenOutSpellsAsPostgreSQL(t *testing.T) {
	for in, want := range map[string]string{
		`1e2`: `100`, `1.5E-3`: `0.0015`, `100e-2`: `1.00`, `-0`: `0`, `-0.0`: `0.0`, `-0e-3`: `0.000`,
		`0.000e5`: `0`, `1.23e1`: `12.3`, `1.50e-2`: `0.0150`, `-1.25e+1`: `-12.5`, `0.0012e3`: `1.2`,
		`123.456e7`: `1234560000`, `-1e-3`: `-0.001`, `1e300`: `1` + strings.Repeat("0", 300),
		`12.50`: `12.50`, `-7`: `-7`, `0`: `0`, `-0.5`: `-0.5`, `1E0`: `1`, `5e-1`: `0.5`,
		// Refused before anything is stored: left as they are.
		`1e1006`: `1e1006`, `1e400000`: `1e400000`, `1x`: `1x`,
	} {
		got, changed := WrittenOut(in)
		if got != want || changed != (in != want) {
			t.Errorf("WrittenOut(%s) = %.40s, %v; want %.40s", in, got, changed, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		num := randomNumber(r)
		n, ok := parseNumber([]byte(num))
		if !ok || n.outOfRange() != "" {
			continue
		}
		got, _ := WrittenOut(num)
		if n.written()-int64(len(num)) <= MaxNumberGrowth && int64(len(got)) != n.written() {
			t.Fatalf("WrittenOut(%s) = %s, %d characters; written says %d", num, got, len(got), n.written())
		}
	}
}

func randomNumber(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(2) == 0 {
		b.WriteByte('-')
	}
	if r.IntN(3) == 0 {
		b.WriteByte('0')
	} else {
		fmt.Fprint(&b, r.IntN(100000)+1)
	}
	if r.IntN(2) == 0 {
		b.WriteByte('.')
		for range r.IntN(6) + 1 {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if r.IntN(4) != 0 {
		fmt.Fprintf(&b, "%s%d", []string{"e", "E", "e+", "e-", "E-"}[r.IntN(5)], r.IntN(40))
	}
	return b.String()
}

// MayRespell finds every number WrittenOut changes, wherever it sits in the
// text (a word's last byte, the text's last bytes), and passes text without
// one.
func TestMayRespellFindsEveryNumberSpeltOtherwise(t *testing.T) {
	for _, num := range []string{`1e2`, `1.5E-3`, `-0`, `-0.00`, `-0e1`, `0E0`} {
		for pad := range 20 {
			for _, doc := range []string{
				`{"` + strings.Repeat("k", pad) + `":` + num + `}`,
				`[` + strings.Repeat("1,", pad) + num + `]`,
				strings.Repeat(" ", pad) + num,
			} {
				if !MayRespell([]byte(doc)) {
					t.Errorf("MayRespell(%s) = false", doc)
				}
			}
		}
	}
	for _, doc := range []string{`{"a":12.50,"b":-0.5,"c":[-1,0,100],"d":"2024-01-05","e":-0.001}`,
		`{"when":"2024-01-05T10:00:00-05:00","n":-10}`, `[]`, `-1`, `"-05"`} {
		if MayRespell([]byte(doc)) {
			t.Errorf("MayRespell(%s) = true, want false: no number in it is spelt otherwise", doc)
		}
	}
}
