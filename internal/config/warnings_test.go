package config

import (
	"slices"
	"strings"
	"testing"
)

// A drain shorter than a used provider's first-byte deadline, and a route
// with more targets than max_attempts, are accepted (both can be deliberate)
// but warned about at start, each naming the fix. Found by review.
func TestWarningsNameDrainAndAttemptsFixes(t *testing.T) {
	const base = `database_url: postgres://unused
providers:
  - {name: a, type: scripted, model: m, timeout: 60s, first_byte_timeout: 30s}
  - {name: b, type: scripted, model: m, timeout: 20s, first_byte_timeout: 10s}
  - {name: unused, type: scripted, model: m, timeout: 120s, first_byte_timeout: 50s}
routes:
  default:
    providers: [a, b]
`
	parse := func(t *testing.T, yaml string) *Config {
		t.Helper()
		c, err := Parse([]byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Defaults (drain: the longest timeout; max_attempts 4): nothing to say.
	if w := parse(t, base).Warnings(); len(w) != 0 {
		t.Errorf("default configuration warned: %q", w)
	}
	// A drain at the longest used timeout covers it (and every first-byte
	// deadline); the unused provider's longer ones do not count.
	if w := parse(t, base+"shutdown: {drain: 60s}\n").Warnings(); len(w) != 0 {
		t.Errorf("drain of 60s warned: %q", w)
	}
	// Below a first-byte deadline, and so below that provider's timeout:
	// both, each with its fix (drain_timeout_warning_test.go: the timeout's
	// alone).
	got := parse(t, base+"shutdown: {drain: 20s}\n").Warnings()
	want := []string{"shutdown.drain (20s) is shorter than provider a's first_byte_timeout (30s): an attempt still waiting for its first byte " +
		"when a drain runs out is recorded unknown and its job waits for a resolution; set shutdown.drain to at least 30s (or leave it out: the longest provider timeout)",
		"shutdown.drain (20s) is shorter than provider a's timeout (1m0s): an answer still streaming when a drain runs out is cut " +
			"(its attempt recorded failed, kind shutdown) and sent again by the replica that adopts the job: one more of the route's max_attempts, " +
			"and the provider is paid for the cut answer as well as the new one; set shutdown.drain to at least 1m0s (or leave it out: the longest provider timeout) to let such answers finish"}
	if !slices.Equal(got, want) {
		t.Errorf("drain warnings:\n%q\nwant\n%q", got, want)
	}
	long := strings.Replace(base, "providers: [a, b]", "providers: [a, b, a2, b2, c2]\n    max_attempts: 3", 1)
	long = strings.Replace(long, "providers:\n", "providers:\n  - {name: a2, type: scripted, model: m}\n  - {name: b2, type: scripted, model: m}\n  - {name: c2, type: scripted, model: m}\n", 1)
	got = parse(t, long+"  short:\n    providers: [a, b]\n    max_attempts: 2\n").Warnings()
	want = []string{"route default lists 5 targets but max_attempts is 3: a job makes at most 3 attempts, so its last 2 targets are tried only " +
		"when earlier ones are skipped (breaker open, conformance gate, context window); set routes.default.max_attempts to at least 5 to let every target be tried"}
	if !slices.Equal(got, want) {
		t.Errorf("max_attempts warnings:\n%q\nwant\n%q", got, want)
	}
}
