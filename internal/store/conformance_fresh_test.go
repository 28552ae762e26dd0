package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// LatestConformanceRuns judges each run's freshness in the database, by the
// rule ConformanceStanding (and so the gate) uses: the last pass is younger
// than the maximum age on the database clock; with a maximum age of zero or
// less nothing is fresh. For every age and maximum age the two agree.
func TestLatestConformanceRunsFresh(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	// p-new passed just now; p-old passed two hours ago (database clock);
	// p-failed passed just now and then failed; p-never never passed.
	record(t, b, conformanceRun("p-new", "triage", "1", true))
	record(t, b, conformanceRun("p-old", "triage", "1", true))
	if _, err := b.db.Pool.Exec(ctx, `UPDATE conformance_runs SET finished_at = now() - interval '2 hours',
		started_at = now() - interval '2 hours' - interval '3 seconds' WHERE provider = 'p-old'`); err != nil {
		t.Fatal(err)
	}
	record(t, b, conformanceRun("p-failed", "triage", "1", true))
	record(t, b, conformanceRun("p-failed", "triage", "1", false))
	record(t, b, conformanceRun("p-never", "triage", "1", false))

	want := map[time.Duration]map[string]bool{
		168 * time.Hour: {"p-new": true, "p-old": true, "p-failed": true, "p-never": false},
		time.Hour:       {"p-new": true, "p-old": false, "p-failed": true, "p-never": false},
		0:               {"p-new": false, "p-old": false, "p-failed": false, "p-never": false},
		-time.Hour:      {"p-new": false, "p-old": false, "p-failed": false, "p-never": false},
	}
	for maxAge, fresh := range want {
		runs, err := b.st.LatestConformanceRuns(ctx, store.ConformanceFilter{MaxAge: maxAge})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != len(fresh) {
			t.Fatalf("max age %v: %d runs, want %d", maxAge, len(runs), len(fresh))
		}
		for _, r := range runs {
			st, err := b.st.ConformanceStanding(ctx, r.Provider, r.Prompt, r.PromptVersion, maxAge)
			if err != nil {
				t.Fatal(err)
			}
			if r.Fresh != fresh[r.Provider] {
				t.Errorf("max age %v: %s fresh=%v, want %v (last pass %v)", maxAge, r.Provider, r.Fresh, fresh[r.Provider], r.LastPassAt)
			}
			if r.Fresh != st.Fresh || (r.Passed && r.Fresh) != st.Eligible() {
				t.Errorf("max age %v: %s listed passed=%v fresh=%v, but its standing says fresh=%v eligible=%v",
					maxAge, r.Provider, r.Passed, r.Fresh, st.Fresh, st.Eligible())
			}
		}
	}

	// The filters still apply, and so does the maximum age.
	runs, err := b.st.LatestConformanceRuns(ctx, store.ConformanceFilter{Provider: "p-old", Prompt: "triage", MaxAge: 3 * time.Hour})
	if err != nil || len(runs) != 1 || !runs[0].Fresh || !runs[0].Passed {
		t.Fatalf("p-old within 3h: %s (%v)", describe(runs), err)
	}
}

func describe(runs []store.ConformanceRun) string {
	s := ""
	for _, r := range runs {
		s += fmt.Sprintf("[%s %s@%s passed=%v fresh=%v] ", r.Provider, r.Prompt, r.PromptVersion, r.Passed, r.Fresh)
	}
	return s
}
