package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A run's target digest (the target's settings it ran against, migration
// 0024) is stored and read back by every reader of conformance runs; a
// legacy run without one (migration 0028) has none (NULL), and is read as "".
func TestConformanceRunKeepsItsTargetDigest(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	digest := strings.Repeat("ab", 32)
	with := conformanceRun("p", "triage", "1", true)
	with.TargetDigest = digest
	run := record(t, b, with)
	if run.TargetDigest != digest {
		t.Errorf("recorded run: target digest %q, want %q", run.TargetDigest, digest)
	}
	// A legacy run, recorded before the router recorded target digests.
	if _, err := b.db.Pool.Exec(ctx, `INSERT INTO conformance_runs (provider, model, prompt, prompt_version, passed,
		cases_total, cases_passed, started_at, legacy) VALUES ('legacy', 'legacy-model', 'triage', '1', true, 8, 8, now(), true)`); err != nil {
		t.Fatal(err)
	}

	var stored, none *string
	if err := b.db.Pool.QueryRow(ctx, `SELECT (SELECT target_digest FROM conformance_runs WHERE provider = 'p'),
		(SELECT target_digest FROM conformance_runs WHERE provider = 'legacy')`).Scan(&stored, &none); err != nil {
		t.Fatal(err)
	}
	if stored == nil || *stored != digest || none != nil {
		t.Fatalf("stored target digests %v and %v, want %s and NULL", stored, none, digest)
	}

	runs, err := b.st.LatestConformanceRuns(ctx, store.ConformanceFilter{MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range runs {
		got[r.Provider] = r.TargetDigest
	}
	if got["p"] != digest || got["legacy"] != "" || len(got) != 2 {
		t.Errorf("latest runs' target digests %v, want p: %s, legacy: \"\"", got, digest)
	}
	st, err := b.st.ConformanceStandingOf(ctx, "p", "p-model", "triage", "1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if st.Latest == nil || st.Latest.TargetDigest != digest {
		t.Errorf("standing's latest run %+v, want target digest %s", st.Latest, digest)
	}
}

// A target digest is a hex SHA-256: the store says so before the database's
// check refuses anything else, and the check holds for any writer.
func TestConformanceTargetDigestIsASHA256(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	bad := conformanceRun("p", "triage", "1", true)
	bad.TargetDigest = "openai-backup@api.openai.com"
	if _, err := b.st.RecordConformanceRun(ctx, bad); err == nil || !strings.Contains(err.Error(), "not a hex SHA-256") {
		t.Errorf("a target digest that is not a SHA-256: %v, want refused as not a hex SHA-256", err)
	}
	if _, err := b.db.Pool.Exec(ctx, `INSERT INTO conformance_runs (provider, prompt, prompt_version, passed, cases_total,
		cases_passed, started_at, prompt_digest, target_digest) VALUES ('p', 'triage', '1', false, 0, 0, now(), repeat('a', 64), 'ABC')`); err == nil ||
		!strings.Contains(err.Error(), "conformance_runs_target_digest_sha256") {
		t.Errorf("the database took a target digest that is not a SHA-256: %v", err)
	}
}

// A run recorded without a target digest (as before migration 0024) counts
// for any settings; one with a digest only for its own.
func TestConformanceSameTarget(t *testing.T) {
	for _, c := range []struct {
		ran, now string
		same     bool
	}{{"", "a", true}, {"a", "", true}, {"a", "a", true}, {"a", "b", false}} {
		if got := store.SameTarget(c.ran, c.now); got != c.same {
			t.Errorf("SameTarget(%q, %q) = %v, want %v", c.ran, c.now, got, c.same)
		}
	}
}
