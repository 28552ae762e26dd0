package config

import (
	"slices"
	"testing"
)

// A drain that covers every used first-byte deadline but not a used
// provider's whole timeout is warned about too: an answer still streaming
// when the drain runs out is cut and sent again by the replica that adopts
// the job — paid for twice. Only the first-byte case was. Found by review.
func TestDrainShorterThanATimeoutIsWarnedAbout(t *testing.T) {
	const base = `database_url: postgres://unused
providers:
  - {name: a, type: scripted, model: m, timeout: 60s, first_byte_timeout: 30s}
  - {name: b, type: scripted, model: m, timeout: 90s, first_byte_timeout: 10s}
  - {name: unused, type: scripted, model: m, timeout: 120s, first_byte_timeout: 50s}
routes:
  default:
    providers: [a, b]
`
	warnings := func(t *testing.T, yaml string) []string {
		t.Helper()
		c, err := Parse([]byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		return c.Warnings()
	}
	// Left out, the drain is the longest provider timeout: nothing to say.
	// Nor at the longest used timeout (the unused provider's does not count).
	for _, extra := range []string{"", "shutdown: {drain: 90s}\n"} {
		if w := warnings(t, base+extra); len(w) != 0 {
			t.Errorf("%q warned: %q", extra, w)
		}
	}
	timeoutWarning := "shutdown.drain (30s) is shorter than provider b's timeout (1m30s): an answer still streaming when a drain runs out is cut " +
		"(its attempt recorded failed, kind shutdown) and sent again by the replica that adopts the job: one more of the route's max_attempts, " +
		"and the provider is paid for the cut answer as well as the new one; set shutdown.drain to at least 1m30s (or leave it out: the longest provider timeout) to let such answers finish"
	if got, want := warnings(t, base+"shutdown: {drain: 30s}\n"), []string{timeoutWarning}; !slices.Equal(got, want) {
		t.Errorf("drain of 30s (every first-byte deadline, not b's timeout):\n%q\nwant\n%q", got, want)
	}
	// Below a first-byte deadline too: both, each with its fix.
	got := warnings(t, base+"shutdown: {drain: 20s}\n")
	want := []string{"shutdown.drain (20s) is shorter than provider a's first_byte_timeout (30s): an attempt still waiting for its first byte " +
		"when a drain runs out is recorded unknown and its job waits for a resolution; set shutdown.drain to at least 30s (or leave it out: the longest provider timeout)",
		"shutdown.drain (20s) is shorter than provider b's timeout (1m30s): an answer still streaming when a drain runs out is cut " +
			"(its attempt recorded failed, kind shutdown) and sent again by the replica that adopts the job: one more of the route's max_attempts, " +
			"and the provider is paid for the cut answer as well as the new one; set shutdown.drain to at least 1m30s (or leave it out: the longest provider timeout) to let such answers finish"}
	if !slices.Equal(got, want) {
		t.Errorf("drain of 20s:\n%q\nwant\n%q", got, want)
	}
}
