package config

import (
	"strings"
	"testing"
	"time"
)

// A provider called without streaming (stream: false) gets its answer's
// first byte only once the answer is generated whole: the adapters bound
// that wait by timeout alone, so its first_byte_timeout is its timeout —
// left out, or written below it — and routing (hedge delays, the drain, the
// breaker's excuse) counts the same budget. Before, the default was 30s (at
// most half of timeout), and every answer slower than that became
// `unknown`. A streamed provider keeps its own. Found by review (rchat2 #1).
func TestUnstreamedProviderFirstByteTimeoutIsItsTimeout(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`
providers:
  - {name: plain, type: openai, base_url: http://x/v1, model: m, stream: false, timeout: 5m}
  - {name: written, type: anthropic, model: m, api_key_env: ANTHROPIC_API_KEY, stream: false, timeout: 2m, first_byte_timeout: 10s}
  - {name: same, type: openai, base_url: http://x/v1, model: m, stream: false, timeout: 2m, first_byte_timeout: 2m}
  - {name: streamed, type: openai, base_url: http://x/v1, model: m, timeout: 5m}
  - {name: s, type: scripted, timeout: 5m}
routes:
  r: {targets: [{provider: plain}, {provider: written}, {provider: same}, {provider: streamed}, {provider: s}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{"plain": 5 * time.Minute, "written": 2 * time.Minute, "same": 2 * time.Minute,
		"streamed": 30 * time.Second, "s": 30 * time.Second}
	for _, p := range c.Providers {
		if got := p.FirstByteTimeout.D(); got != want[p.Name] {
			t.Errorf("provider %s: first_byte_timeout %s, want %s", p.Name, got, want[p.Name])
		}
	}
}

// A first_byte_timeout above timeout is still refused with stream: false,
// saying to leave it out.
func TestUnstreamedProviderFirstByteTimeoutAboveTimeoutRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	_, err := Parse([]byte(`
providers:
  - {name: a, type: openai, base_url: http://x/v1, model: m, stream: false, timeout: 1m, first_byte_timeout: 2m}
routes:
  r: {providers: [a]}
`))
	want := "providers[0] (a).first_byte_timeout (2m0s) must be at most timeout (1m0s): with stream: false the answer's first byte comes only with the whole answer, " +
		"which timeout bounds; leave first_byte_timeout out (it is then timeout)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want it to say %q", err, want)
	}
}
