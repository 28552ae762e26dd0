package prompt_test

import (
	"strings"
	"testing"
)

// A whole-number field is judged as the decimal written, not as the float64
// YAML reads a number with a point or an exponent as: a fraction too small
// for a float64, a float-written integer past 2^53 (which would load
// rounded) and one outside int's range (which would load as its least value)
// are refused, each saying what to write; a plain integer keeps its exact
// value up to int64. Found by review (rdocs8).
func TestWholeNumberFieldsAreJudgedAsWritten(t *testing.T) {
	for _, c := range []struct{ field, value, want string }{
		{"max_tokens", "100.0000000000000001", "line 3: the number 100.0000000000000001, where a whole number is expected"},
		{"seed", "1e-400", "line 8: the number 1e-400, where a whole number is expected"},
		{"seed", "-.inf", "line 8: the number -.inf, where a whole number is expected"},
		{"seed", "9007199254740993.0", "line 8: the number 9007199254740993.0, which YAML reads as a float and would load as 9007199254740992 " +
			"(a number written with a fraction or an exponent is exact only up to 2^53, 9007199254740992): write it as an integer, 9007199254740993"},
		{"seed", "-1e30", "line 8: the number -1e30, where a whole number from -9223372036854775808 to 9223372036854775807 is expected"},
		{"seed", "9223372036854775808.0", "line 8: the number 9223372036854775808.0, where a whole number from -9223372036854775808 to 9223372036854775807 is expected"},
	} {
		m := manifestWith("seed: " + c.value + "\n")
		if c.field == "max_tokens" {
			m = strings.Replace(manifestWith(""), "max_tokens: 100", "max_tokens: "+c.value, 1)
		}
		_, file, err := loadOne(t, m, nil)
		if err == nil {
			t.Errorf("%s: %s loaded", c.field, c.value)
			continue
		}
		if got, want := err.Error(), file+": "+c.field+": "+c.want; got != want {
			t.Errorf("LoadDir =\n%s\nwant\n%s", got, want)
		}
	}
	for _, c := range []struct {
		value string
		want  int
	}{
		{"9007199254740993", 9007199254740993}, {"9223372036854775807", 9223372036854775807},
		{"9007199254740992.0", 9007199254740992}, {"1e17", 100000000000000000}, {"-4.2e1", -42},
		{"1_000.000", 1000}, {"0.0e5", 0}, {"!!float 0x64", 100},
	} {
		set, _, err := loadOne(t, manifestWith("seed: "+c.value+"\n"), nil)
		if err != nil {
			t.Errorf("seed: %s: %v", c.value, err)
			continue
		}
		if p, _ := set.Get("p", ""); p.Seed == nil || *p.Seed != c.want {
			t.Errorf("seed: %s loaded as %v, want %d", c.value, p.Seed, c.want)
		}
	}
}
