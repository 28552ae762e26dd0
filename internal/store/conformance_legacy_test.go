package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// oldBinaryInsert is the INSERT of a router binary older than migrations
// 0023/0024 (a CI image pinned to an older release): no digests.
const oldBinaryInsert = `INSERT INTO conformance_runs (provider, model, prompt, prompt_version, passed,
	cases_total, cases_passed, cases, suite_digest, router_version, started_at)
	VALUES ('backup', 'gpt-4o-mini', 'triage', '1', true, 10, 10, '[]', '', 'v0.9-old-ci', now())`

// A run recorded today without both digests would count for any prompt
// content and target settings, like a run from before the router recorded
// them. Only runs from before migration 0028 (legacy) may lack them: the
// store refuses to record one, and the database refuses an older binary's
// INSERT, loudly, naming the check.
func TestConformanceRunWithoutDigestsIsRefused(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	for _, drop := range []func(*store.NewConformanceRun){
		func(r *store.NewConformanceRun) { r.PromptDigest = "" },
		func(r *store.NewConformanceRun) { r.TargetDigest = "" },
	} {
		r := conformanceRun("p", "triage", "1", true)
		drop(&r)
		if _, err := b.st.RecordConformanceRun(ctx, r); err == nil || !strings.Contains(err.Error(), "records the prompt's content digest and the target's settings digest") {
			t.Errorf("RecordConformanceRun without a digest = %v, want refused", err)
		}
	}
	_, err := b.db.Pool.Exec(ctx, oldBinaryInsert)
	if err == nil || !strings.Contains(err.Error(), "conformance_runs_digests_required_upgrade_router") {
		t.Fatalf("an older binary's INSERT without digests = %v, want the check's refusal", err)
	}
	var n int
	if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM conformance_runs`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d runs stored (%v), want none", n, err)
	}
	// A legacy run (from before 0028) may lack them, and counts for any.
	if _, err := b.db.Pool.Exec(ctx, strings.Replace(strings.Replace(oldBinaryInsert, "started_at)", "started_at, legacy)", 1),
		"now())", "now(), true)", 1)); err != nil {
		t.Fatal(err)
	}
	st, err := b.st.ConformanceStandingOf(ctx, "backup", "gpt-4o-mini", "triage", "1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Eligible() || !st.Latest.Legacy || st.Latest.PromptDigest != "" || st.Latest.TargetDigest != "" {
		t.Fatalf("legacy run: eligible %v, latest %+v; want eligible, legacy, no digests", st.Eligible(), st.Latest)
	}
}

// Should a run that is not legacy lack a digest all the same (the check
// dropped), it matches no prompt content or target settings: the gate and
// the views read it with a digest that equals none, not "" (any).
func TestDigestlessRunThatIsNotLegacyMatchesNothing(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `ALTER TABLE conformance_runs DROP CONSTRAINT conformance_runs_digests_required_upgrade_router`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, oldBinaryInsert); err != nil {
		t.Fatal(err)
	}
	st, err := b.st.ConformanceStandingOf(ctx, "backup", "gpt-4o-mini", "triage", "1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	now := strings.Repeat("e", 64)
	if st.Latest == nil || st.Latest.Legacy || store.SamePromptContent(st.Latest.PromptDigest, now) || store.SameTarget(st.Latest.TargetDigest, now) {
		t.Fatalf("standing's latest %+v: want it to match no prompt content or target settings", st.Latest)
	}
	runs, err := b.st.LatestConformanceRuns(ctx, store.ConformanceFilter{MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || store.SamePromptContent(runs[0].PromptDigest, now) || store.SameTarget(runs[0].TargetDigest, now) {
		t.Fatalf("latest runs %+v: want the run matching no prompt content or target settings", runs)
	}
}

// The latest run is not simply the one recorded last: a slow pass that
// started before an operator's failing run, and was recorded after it, does
// not re-admit the target. A failing run that finished after a pass started
// withdraws it, for the gate (ConformanceStandingOf) and the views
// (LatestConformanceRuns) alike; a pass that started after the failure
// finished counts.
func TestConformancePassOverlappedByFailureDoesNotCount(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	fail := conformanceRun("p", "triage", "1", false)
	fail.Duration = time.Second
	failed := record(t, b, fail)
	slow := conformanceRun("p", "triage", "1", true)
	slow.Duration = 20 * time.Minute
	record(t, b, slow)

	check := func(wantEligible bool, wantLatest int64) {
		t.Helper()
		for _, model := range []string{"p-model", ""} {
			st, err := b.st.ConformanceStandingOf(ctx, "p", model, "triage", "1", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if st.Eligible() != wantEligible || st.Latest == nil || st.Latest.ID != wantLatest || st.LastPassAt == nil {
				t.Fatalf("model %q: eligible %v, latest %+v; want eligible %v, latest run %d, a last pass",
					model, st.Eligible(), st.Latest, wantEligible, wantLatest)
			}
		}
		runs, err := b.st.LatestConformanceRuns(ctx, store.ConformanceFilter{Provider: "p", MaxAge: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 || runs[0].ID != wantLatest || runs[0].Passed != wantEligible || runs[0].LastPassAt == nil {
			t.Fatalf("latest runs %+v, want run %d", runs, wantLatest)
		}
	}
	check(false, failed.ID)

	again := conformanceRun("p", "triage", "1", true)
	again.Duration = 0 // started after the failure finished
	passed := record(t, b, again)
	check(true, passed.ID)
}
