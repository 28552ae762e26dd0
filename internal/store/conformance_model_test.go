package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// Conformance results are per provider × model (SPEC §15): the latest run of
// each model is listed, and its last pass is that model's, never another's.
// Before, one row per provider hid the other model's run, and a failing run
// of a new model showed the old model's pass as its fresh last pass.
func TestLatestConformanceRunsArePerModel(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	old := conformanceRun("p", "triage", "1", true)
	old.Model, old.PromptDigest = "old-model", "digest-a"
	record(t, b, old)
	neu := conformanceRun("p", "triage", "1", false)
	neu.Model, neu.PromptDigest = "new-model", "digest-b"
	record(t, b, neu)

	runs, err := b.st.LatestConformanceRuns(ctx, store.ConformanceFilter{Provider: "p", MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	byModel := map[string]store.ConformanceRun{}
	for _, r := range runs {
		byModel[r.Model] = r
	}
	if len(runs) != 2 || len(byModel) != 2 {
		t.Fatalf("runs %+v, want one per model", runs)
	}
	if r := byModel["new-model"]; r.Passed || r.LastPassAt != nil || r.Fresh || r.PromptDigest != "digest-b" {
		t.Errorf("new-model: passed %v, last pass %v, fresh %v, digest %q; want its own failing run (digest-b), no pass",
			r.Passed, r.LastPassAt, r.Fresh, r.PromptDigest)
	}
	if r := byModel["old-model"]; !r.Passed || r.LastPassAt == nil || !r.Fresh || r.PromptDigest != "digest-a" {
		t.Errorf("old-model: passed %v, last pass %v, fresh %v, digest %q; want its fresh pass of digest-a",
			r.Passed, r.LastPassAt, r.Fresh, r.PromptDigest)
	}

	// The standing of the new model names the model that passed.
	st, err := b.st.ConformanceStandingOf(ctx, "p", "new-model", "triage", "1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if st.Eligible() || !slices.Equal(st.PassedModels, []string{"old-model"}) {
		t.Errorf("standing of new-model: eligible %v, passed models %v; want not eligible, [old-model]", st.Eligible(), st.PassedModels)
	}
	st, err = b.st.ConformanceStandingOf(ctx, "p", "old-model", "triage", "1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Eligible() || st.Latest.PromptDigest != "digest-a" || len(st.PassedModels) != 0 {
		t.Errorf("standing of old-model: eligible %v, digest %q, passed models %v", st.Eligible(), st.Latest.PromptDigest, st.PassedModels)
	}
}

// A run recorded without a prompt digest (as before migration 0023) counts
// for any content; one with a digest only for its own.
func TestSamePromptContent(t *testing.T) {
	for _, c := range []struct {
		ran, now string
		same     bool
	}{{"", "a", true}, {"a", "", true}, {"a", "a", true}, {"a", "b", false}} {
		if got := store.SamePromptContent(c.ran, c.now); got != c.same {
			t.Errorf("SamePromptContent(%q, %q) = %v, want %v", c.ran, c.now, got, c.same)
		}
	}
}
