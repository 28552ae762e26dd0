package conformance

import "fmt"

// MaxGateTemperature is the highest temperature at which a run counts for
// the gate. SPEC §9 has conformance runs made at low temperature, and the
// prompt's own temperature does not apply to them (docs/prompts.md): a pass
// at a high temperature is luck as much as conformance, and admitting a
// target on it would let the gate vouch for answers it never saw. A run above
// it (--temperature, Options.Temperature, or a suite's temperature) is
// exploratory: every case runs and is reported, nothing is recorded, and the
// run does not pass.
const MaxGateTemperature float32 = 0.5

// exploratoryMeans is what exploratory results mean, for the table and the
// command's last words.
func exploratoryMeans() string {
	return fmt.Sprintf("run at a temperature above %g, which the gate does not count (conformance runs for the gate are made at low temperature); "+
		"not recorded, so the gate still judges those providers by their previous runs: rerun at %g or below (the suites' default is 0)",
		MaxGateTemperature, MaxGateTemperature)
}
