package prompt_test

import (
	"strings"
	"testing"
)

// docs/prompts.md: "`max_tokens` and `seed` take whole numbers: `100.5` is
// refused (YAML would cut it to 100)". A fraction too small for a float64 to
// hold, or a float-written integer past 2^53, is still cut silently: the
// manifest loads with a number the file did not write.
func TestWholeNumberFieldsKeepWhatWasWritten(t *testing.T) {
	for _, c := range []struct {
		field, written string
		want           int64
	}{
		{"max_tokens", "100.0000000000000001", 100}, // not whole: want refused
		{"seed", "9007199254740993.0", 9007199254740993},
	} {
		m := manifestWith("")
		if c.field == "max_tokens" {
			m = strings.Replace(m, "max_tokens: 100", "max_tokens: "+c.written, 1)
		} else {
			m = manifestWith("seed: " + c.written + "\n")
		}
		set, _, err := loadOne(t, m, nil)
		if err != nil {
			continue // refused, naming it: fine
		}
		p, _ := set.Get("p", "")
		var got int64
		if c.field == "max_tokens" {
			got = int64(p.MaxTokens)
			if got == c.want {
				t.Errorf("%s: %s loaded as %d: a number with a fraction was cut silently (want it refused, as 100.5 is)", c.field, c.written, got)
			}
			continue
		}
		if p.Seed != nil {
			got = int64(*p.Seed)
		}
		if got != c.want {
			t.Errorf("%s: %s loaded as %d, not the number written", c.field, c.written, got)
		}
	}
}
