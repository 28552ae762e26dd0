package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

func conformanceRun(provider, prompt, version string, passed bool) store.NewConformanceRun {
	r := store.NewConformanceRun{Provider: provider, Model: provider + "-model", Prompt: prompt, PromptVersion: version,
		Passed: passed, CasesTotal: 8, CasesPassed: 8, RouterVersion: "test", Duration: 3 * time.Second,
		PromptDigest: testPromptDigest, TargetDigest: testTargetDigest,
		Cases: []map[string]any{{"name": "case-1", "passed": passed}}}
	if !passed {
		r.CasesPassed = 6
	}
	return r
}

// testPromptDigest and testTargetDigest are the digests conformanceRun
// records (every run records both).
var (
	testPromptDigest = strings.Repeat("a", 64)
	testTargetDigest = strings.Repeat("b", 64)
)

func record(t *testing.T, b *bundle, r store.NewConformanceRun) *store.ConformanceRun {
	t.Helper()
	run, err := b.st.RecordConformanceRun(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestConformanceRecordUsesDatabaseClock(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	run := record(t, b, conformanceRun("p1", "triage", "1", true))
	var dbNow time.Time
	if err := b.db.Pool.QueryRow(ctx, "SELECT now()").Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	if run.ID == 0 || run.FinishedAt.After(dbNow) {
		t.Fatalf("run %d finished at %v, database now %v", run.ID, run.FinishedAt, dbNow)
	}
	if got := run.FinishedAt.Sub(run.StartedAt); got != 3*time.Second {
		t.Fatalf("started_at is %v before finished_at, want the run's 3s", got)
	}
	var cases []map[string]any
	var stored []byte
	if err := b.db.Pool.QueryRow(ctx, "SELECT cases FROM conformance_runs WHERE id = $1", run.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(stored, &cases); err != nil || len(cases) != 1 || cases[0]["name"] != "case-1" {
		t.Fatalf("cases stored as %s (%v)", stored, err)
	}
}

func TestConformanceRecordRejectsInconsistentRuns(t *testing.T) {
	b := setup(t)
	bad := []store.NewConformanceRun{
		{Provider: "p", Prompt: "triage", PromptVersion: "1", Passed: true, CasesTotal: 8, CasesPassed: 7},
		{Provider: "p", Prompt: "triage", PromptVersion: "1", Passed: true},
		{Provider: "p", Prompt: "triage", PromptVersion: "1", CasesTotal: 2, CasesPassed: 3},
		{Provider: "", Prompt: "triage", PromptVersion: "1"},
		{Provider: "p", Prompt: "triage"},
	}
	for i, r := range bad {
		if _, err := b.st.RecordConformanceRun(context.Background(), r); err == nil {
			t.Errorf("run %d (%+v) was recorded", i, r)
		}
	}
	if n := count(t, b, "SELECT count(*) FROM conformance_runs"); n != 0 {
		t.Fatalf("%d rows stored", n)
	}
}

func TestConformanceStanding(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	const maxAge = 168 * time.Hour
	standing := func(provider, version string) *store.ConformanceStanding {
		t.Helper()
		st, err := b.st.ConformanceStanding(ctx, provider, "triage", version, maxAge)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}

	// Nothing recorded.
	st := standing("p1", "1")
	if st.Latest != nil || st.LastPassAt != nil || st.Fresh || st.Eligible() || st.Now.IsZero() {
		t.Fatalf("no runs: %+v", st)
	}

	// A pass of another version does not count, but is reported.
	record(t, b, conformanceRun("p1", "triage", "0", true))
	st = standing("p1", "1")
	if st.Eligible() || !slices.Equal(st.PassedVersions, []string{"0"}) {
		t.Fatalf("other version: eligible=%v passed versions %v", st.Eligible(), st.PassedVersions)
	}

	// A fresh pass of exactly this version.
	record(t, b, conformanceRun("p1", "triage", "1", true))
	st = standing("p1", "1")
	if !st.Eligible() || !st.Fresh || st.LastPassAt == nil || st.LastPassAge < 0 || st.LastPassAge > time.Hour {
		t.Fatalf("fresh pass: %+v", st)
	}
	// Another provider is unaffected.
	if standing("p2", "1").Eligible() {
		t.Fatal("p2 eligible through p1's run")
	}

	// Age it past max_age on the database clock.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE conformance_runs SET finished_at = now() - interval '9 days',
		started_at = now() - interval '9 days' - interval '3 seconds' WHERE provider = 'p1' AND prompt_version = '1'`); err != nil {
		t.Fatal(err)
	}
	st = standing("p1", "1")
	if st.Eligible() || st.Fresh || st.LastPassAt == nil {
		t.Fatalf("stale pass: %+v", st)
	}
	if d := st.LastPassAge - 9*24*time.Hour; d < 0 || d > time.Hour {
		t.Fatalf("stale pass age %v, want about 9 days", st.LastPassAge)
	}

	// A fresh pass, then a failing run: the latest run decides.
	record(t, b, conformanceRun("p1", "triage", "1", true))
	record(t, b, conformanceRun("p1", "triage", "1", false))
	st = standing("p1", "1")
	if st.Eligible() || st.Latest == nil || st.Latest.Passed || st.Latest.CasesPassed != 6 || !st.Fresh {
		t.Fatalf("latest failed: eligible=%v latest=%+v fresh=%v", st.Eligible(), st.Latest, st.Fresh)
	}
	// A pass that started after the failing run finished (a failing run
	// that finished while a pass ran withdraws it: TestConformancePassOverlappedByFailure).
	again := conformanceRun("p1", "triage", "1", true)
	again.Duration = 0
	record(t, b, again)
	if st = standing("p1", "1"); !st.Eligible() {
		t.Fatalf("passed again: %+v", st)
	}
}

func TestLatestConformanceRuns(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	record(t, b, conformanceRun("p1", "triage", "1", true))
	last := record(t, b, conformanceRun("p1", "triage", "1", false))
	record(t, b, conformanceRun("p1", "invoice", "1", true))
	record(t, b, conformanceRun("p2", "triage", "1", false))
	record(t, b, conformanceRun("p1", "triage", "2", true))

	runs, err := b.st.LatestConformanceRuns(ctx, store.ConformanceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.Provider+"/"+r.Prompt+"@"+r.PromptVersion)
		if r.Cases != nil {
			t.Errorf("%s: cases without WithCases", r.Provider)
		}
	}
	want := []string{"p1/invoice@1", "p1/triage@1", "p1/triage@2", "p2/triage@1"}
	if !slices.Equal(got, want) {
		t.Fatalf("latest runs %v, want %v", got, want)
	}
	r := runs[1]
	if r.ID != last.ID || r.Passed || r.LastPassAt == nil || !r.LastPassAt.Before(r.FinishedAt) {
		t.Fatalf("p1/triage@1: %+v, want the failing run %d with the earlier pass", r, last.ID)
	}
	if runs[3].LastPassAt != nil {
		t.Fatalf("p2 never passed, last_pass_at %v", runs[3].LastPassAt)
	}

	runs, err = b.st.LatestConformanceRuns(ctx, store.ConformanceFilter{Provider: "p1", Prompt: "triage", WithCases: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Cases == nil {
		t.Fatalf("filtered: %d runs, cases %s", len(runs), runs[0].Cases)
	}
}
