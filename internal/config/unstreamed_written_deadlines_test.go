package config

import (
	"strings"
	"testing"
	"time"
)

// A first_byte_timeout written below timeout on a provider with stream: false
// is still raised to timeout (its answer's first byte comes only with the
// whole answer), but no longer silently: an operator who wrote 10s to fail
// over fast from a hanging provider is told it waits the whole timeout, and
// what to change instead. Left out, or written as timeout, it is not named;
// a streamed provider keeps its value. Found by review (wwarn).
func TestUnstreamedWrittenFirstByteTimeoutIsWarned(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`
providers:
  - {name: plain, type: openai, base_url: http://x/v1, model: m, stream: false, timeout: 5m}
  - {name: written, type: anthropic, model: m, api_key_env: ANTHROPIC_API_KEY, stream: false, timeout: 2m, first_byte_timeout: 10s}
  - {name: same, type: openai, base_url: http://x/v1, model: m, stream: false, timeout: 2m, first_byte_timeout: 2m}
  - {name: streamed, type: openai, base_url: http://x/v1, model: m, timeout: 2m, first_byte_timeout: 10s}
routes:
  r: {targets: [{provider: plain}, {provider: written}, {provider: same}, {provider: streamed}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Providers[1].FirstByteTimeout.D(); got != 2*time.Minute {
		t.Fatalf("provider written: first_byte_timeout %s, want it raised to its timeout, 2m0s", got)
	}
	want := "provider written's first_byte_timeout (10s) has no effect with stream: false: the answer's first byte comes only with the whole answer, " +
		"so only its timeout (2m0s) bounds the wait, and first_byte_timeout is taken as 2m0s (hedging, the drain and the breaker count it so); " +
		"to fail over sooner from a provider that does not answer, lower providers[1].timeout to the longest wait you accept for a whole answer " +
		"(or set stream: true, where first_byte_timeout applies); otherwise leave first_byte_timeout out"
	check := func(c *Config) {
		t.Helper()
		var got []string
		for _, w := range c.Warnings() {
			if strings.Contains(w, "first_byte_timeout (") && strings.Contains(w, "stream: false") {
				got = append(got, w)
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Fatalf("first_byte_timeout warnings:\n%s\nwant exactly:\n%s", strings.Join(got, "\n"), want)
		}
	}
	check(c)
	// Defaults applied again (the value now equals timeout) keep the warning.
	again := c.WithDefaults()
	check(&again)
}

// A stream_idle_timeout at or past timeout is still refused with stream:
// false (a mistake either way, and stream: true would refuse it), but the
// message says it does not apply there and can be left out; so does the one
// for a written 0. A streamed provider keeps its own messages.
func TestUnstreamedStreamIdleTimeoutRefusalSaysItDoesNotApply(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	_, err := Parse([]byte(`
providers:
  - {name: a, type: openai, base_url: http://x/v1, model: m, stream: false, timeout: 1m, stream_idle_timeout: 2m}
  - {name: z, type: anthropic, model: m, api_key_env: ANTHROPIC_API_KEY, stream: false, timeout: 1m, stream_idle_timeout: 0s}
  - {name: s, type: openai, base_url: http://x/v1, model: m, timeout: 1m, stream_idle_timeout: 2m}
routes:
  r: {providers: [a, z, s]}
`))
	if err == nil {
		t.Fatal("accepted, want the stream_idle_timeouts refused")
	}
	for _, want := range []string{
		"providers[0] (a).stream_idle_timeout (2m0s) must be below timeout (1m0s); with stream: false it does not apply " +
			"(the answer comes whole, with no gaps between chunks to bound), so leave stream_idle_timeout out",
		"providers[1] (z).stream_idle_timeout (0s) must be a positive duration below timeout (1m0s); with stream: false it does not apply " +
			"(the answer comes whole, with no gaps between chunks to bound), so leave it out",
		"providers[2] (s).stream_idle_timeout (2m0s) must be below timeout (1m0s), or a stalled stream is only ever cut by the total timeout",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got %v\nwant it to say %q", err, want)
		}
	}
}
