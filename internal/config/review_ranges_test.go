package config

import (
	"strings"
	"testing"
)

// Values no check looked at: a negative route deadline or context window, a
// provider timeout so short that its derived first-byte and idle deadlines
// are 0 (read as "none" by the adapters), and YAML's .nan and .inf, which
// compare false with every bound.
func TestRangesNoCheckLookedAt(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, `
listne: 1
limits: {requests_per_second: .nan}
api_keys:
  - {owner: o, key_env: K, limits: {requests_per_second: .inf}}
providers:
  - {name: p, type: scripted, context_window: -5, timeout: 1ns, price: {input_per_mtok: .inf, output_per_mtok: 1}}
  - {name: q, type: scripted, timeout: -1s}
routes:
  r:
    targets: [{provider: p, price: {input_per_mtok: .nan, output_per_mtok: 1}}, {provider: q}]
    deadline: -1s
    hedge_budget: {percent: .nan}
`,
		"listne is not a known setting",
		"limits.requests_per_second must be 0 (unlimited) or more, and finite",
		"api_keys[0].limits.requests_per_second must be 0 (unlimited) or more, and finite",
		"providers[0] (p).context_window (-5) must be 1 or more",
		"providers[0] (p).first_byte_timeout (0s) must be a positive duration below timeout (1ns)",
		"providers[0] (p).stream_idle_timeout (0s) must be a positive duration below timeout (1ns)",
		"providers[0] (p).price: input_per_mtok and output_per_mtok must be 0 or more",
		"providers[1] (q).timeout (-1s) must be a positive duration",
		"routes.r.targets[0].price",
		"routes.r.deadline (-1s) must be a positive duration",
		"routes.r.hedge_budget.percent: NaN is not between 0 and 100",
	)
	// One bad timeout is one message, not a cascade about the order of the
	// deadlines as well.
	_, err := Parse([]byte("providers:\n  - {name: q, type: scripted, timeout: -1s}\n"))
	if err == nil || strings.Contains(err.Error(), "must be below timeout") {
		t.Fatalf("a negative timeout: %v", err)
	}
}
