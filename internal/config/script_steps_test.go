package config

import "testing"

// A scripted provider's step with a negative latency or a status no HTTP
// provider answers with was accepted and played something else (an answer at
// once; whatever the taxonomy made of 999). Both are refused at load, naming
// the step and what to write.
func TestScriptStepsOutOfRangeAreRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const head = "providers:\n  - name: s\n    type: scripted\n    script:\n"
	mustRefuse(t, head+"      - {latency: -5ms}\n", "providers[0] (s).script[0].latency (-5ms) is negative", "write 0 (or leave it out)")
	mustRefuse(t, head+"      - {output: '{}'}\n      - {status: 999}\n", "providers[0] (s).script[1].status (999) is not an HTTP status", "from 200 to 599")
	mustRefuse(t, head+"      - {status: 100}\n", "providers[0] (s).script[0].status (100)")
	for _, ok := range []string{
		head + "      - {latency: 0s, status: 200}\n",
		head + "      - {status: 599}\n      - {latency: 1s}\n",
	} {
		if _, err := Parse([]byte(ok)); err != nil {
			t.Errorf("refused:\n%s%v", ok, err)
		}
	}
}
