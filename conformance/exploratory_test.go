package conformance_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
)

// SPEC §9 has conformance runs made at low temperature, and the docs say
// they are "regardless" of the prompt's: a run above
// conformance.MaxGateTemperature is exploratory, reported but not recorded,
// so a pass at a high temperature never admits a target; the run does not
// pass, and the table says why. At the cap a run counts.
func TestRunAboveTheTemperatureCapIsExploratoryNotRecorded(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("backup", oracle(e.answers, nil))
	hot := float32(1)
	rep := e.run(t, conformance.Options{Providers: []string{"backup"}, PromptNames: []string{"triage"}, Temperature: &hot})
	r := result(t, rep, "backup", "triage")
	if !r.Exploratory || r.Recorded != nil || rep.Passed || r.Temperature != 1 {
		t.Fatalf("at temperature 1: exploratory %v, recorded %v, temperature %v, report passed %v; want exploratory, not recorded, not passed",
			r.Exploratory, r.Recorded, r.Temperature, rep.Passed)
	}
	if n := runCount(t, e, "backup"); n != 0 {
		t.Fatalf("%d runs recorded at temperature 1, want none", n)
	}
	triage := mustPrompt(t, e, "triage")
	g := conformance.NewGate(e.st, conformance.GateFallbacks, time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(id string) string { return e.targets[id].Model }))
	if ok, _ := g.Allow(ctx, "backup", triage, store.RoleFailover); ok {
		t.Fatal("a pass at temperature 1 admitted the target")
	}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"EXPLORATORY (temperature 1; not recorded)", "1 of 1 exploratory: run at a temperature above 0.5"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "all 1 passed") {
		t.Errorf("table claims a pass:\n%s", out)
	}
	if c := rep.Consequence(); !strings.HasPrefix(c, "exploratory: ") {
		t.Errorf("Consequence() = %q", c)
	}

	capped := conformance.MaxGateTemperature
	rep = e.run(t, conformance.Options{Providers: []string{"backup"}, PromptNames: []string{"triage"}, Temperature: &capped})
	if r := result(t, rep, "backup", "triage"); r.Exploratory || r.Recorded == nil || !*r.Recorded || !rep.Passed {
		t.Fatalf("at the cap: exploratory %v, recorded %v, passed %v; want a recorded pass", r.Exploratory, r.Recorded, rep.Passed)
	}
	if ok, why := g.Allow(ctx, "backup", triage, store.RoleFailover); !ok {
		t.Fatalf("a pass at the cap: %s", why)
	}
}
