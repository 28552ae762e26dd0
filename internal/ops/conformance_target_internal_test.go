package ops

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// The operator views count a run only on the target settings it was recorded
// against, as the gate does (conformance.TargetSettings): a pass of a target
// whose endpoint or request settings changed since (same id, same model) is
// shown not fresh, with the reason, and the dashboard marks it "pass (target
// changed)"; a pass on the settings of now, and one recorded without a
// digest (before migration 0024), stay fresh.
func TestConformanceViewsJudgeTargetSettings(t *testing.T) {
	db, prompts, triage, record := ConformanceFixture(t)
	ctx := context.Background()
	oldEndpoint, nowEndpoint := strings.Repeat("a", 64), strings.Repeat("b", 64)
	pass := func(provider, digest string) { t.Helper(); record(provider, "m", triage.Digest, digest) }
	pass("repointed", oldEndpoint)
	pass("unchanged", nowEndpoint)
	pass("legacy", "")
	runs, err := db.Store.LatestConformanceRuns(ctx, store.ConformanceFilter{MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	j := runJudge{prompts: prompts, modelOf: func(string) string { return "m" },
		digestOf: func(target, model string, _ bool) string {
			if model != "m" {
				t.Errorf("digest asked for %s with model %q, want the run's, m", target, model)
			}
			return nowEndpoint
		}}
	const why = "the endpoint or settings of target repointed changed since this run (its provider's type, base_url or request settings); " +
		"run `router conformance run --provider repointed --prompt triage`"
	want := map[string]struct {
		fresh    bool
		why, not string
	}{"repointed": {false, why, "target changed"}, "unchanged": {true, "", ""}, "legacy": {true, "", ""}}
	for _, r := range runs {
		w := want[r.Provider]
		if v := j.judge(r); v.fresh != w.fresh || v.current != w.fresh || v.why != w.why || v.short != w.not {
			t.Errorf("%s: fresh %v, current %v, why %q, short %q; want fresh and current %v, why %q, short %q",
				r.Provider, v.fresh, v.current, v.why, v.short, w.fresh, w.why, w.not)
		}
	}
	// GET /v1/conformance's entries.
	results := j.results(runs)
	if len(results) != len(want) {
		t.Fatalf("results %+v, want one per provider", results)
	}
	for _, r := range results {
		w := want[r.Provider]
		if r.Fresh != w.fresh || r.Reason != w.why || r.Current == nil || *r.Current != w.fresh {
			t.Errorf("/v1/conformance entry of %s: fresh %v, current %v, reason %q; want fresh and current %v, reason %q",
				r.Provider, r.Fresh, r.Current, r.Reason, w.fresh, w.why)
		}
	}

	// Without the targets' settings, runs on any settings count.
	j.digestOf = nil
	for _, r := range runs {
		if v := j.judge(r); !v.fresh || v.why != "" {
			t.Errorf("%s without target settings: fresh %v, why %q; want fresh", r.Provider, v.fresh, v.why)
		}
	}
}
