package prompt_test

import (
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// Two range bounds that read as the same float64 but are different decimals
// judge differently (ranges compare the bound as written), so they give
// different digests: a conformance pass recorded for one must not count for
// the other.
func TestDigest_RangeBoundAsWritten(t *testing.T) {
	out := `{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`
	digest := func(rules string) string {
		t.Helper()
		set, _, err := loadOne(t, manifestWith("rules:\n  ranges:\n"+rules), map[string]string{"out.json": out})
		if err != nil {
			t.Fatalf("load %q: %v", rules, err)
		}
		p, err := set.Get("p", "")
		if err != nil {
			t.Fatal(err)
		}
		return p.Digest
	}
	max100 := digest("    /n: {min: 0, max: 100}\n")
	digests := map[string]string{"max 100": max100}
	for what, rules := range map[string]string{
		"max 100.00000000000000001": "    /n: {min: 0, max: 100.00000000000000001}\n",
		"max 100.00000000000000002": "    /n: {min: 0, max: 100.00000000000000002}\n",
		"min -1e-400":               "    /n: {min: -1e-400, max: 100}\n",
	} {
		d := digest(rules)
		for other, od := range digests {
			if d == od {
				t.Errorf("%s has the digest of %s, though they judge differently", what, other)
			}
		}
		digests[what] = d
	}
	// Written differently, the same float64 exactly: the same digest.
	if d := digest("    /n: {min: 0.0, max: 1e2}\n"); d != max100 {
		t.Errorf("max 1e2 changed the digest of max 100: %s, want %s", d, max100)
	}
}

// The shipped prompts keep the digests they had before range bounds as
// written counted (pinned: computed before the change), so that no
// conformance result recorded for them goes stale. Pinned again when their
// content changed, with their version (triage@2 and invoice@2: a one-line
// subject, the invoice text as a JSON string; invoice@3: a discount or credit
// is a line with a negative unit_price; triage@3: the body as a JSON string).
func TestDigest_ShippedPromptsUnchanged(t *testing.T) {
	set, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"invoice": "ce508b8b67823fb5a25e7df3c61bf546b9e45baf2765a6312766a90adfb508d8",
		"triage":  "4c39f8e9ec064a39551b5396247269d3e918f4c4b806b13d4255d3cc427444ef",
	} {
		p, err := set.Get(name, "")
		if err != nil {
			t.Fatal(err)
		}
		if p.Digest != want {
			t.Errorf("%s@%s: digest %s, pinned %s", name, p.Version, p.Digest, want)
		}
	}
}
