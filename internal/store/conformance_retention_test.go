package store_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

const day = 24 * time.Hour

// confRow is a conformance run to store as it would have been recorded:
// finished finishedAgo before the database's now, after running for ran.
type confRow struct {
	name, provider, model, version string
	passed                         bool
	finishedAgo, ran               time.Duration
	legacy                         bool
}

// storeConfRows stores rows in the order they finished (oldest first, as
// the router numbers them) and returns each one's id by name.
func storeConfRows(t *testing.T, b *bundle, rows []confRow) map[string]int64 {
	t.Helper()
	rows = slices.Clone(rows)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].finishedAgo > rows[j].finishedAgo })
	ids := map[string]int64{}
	for _, r := range rows {
		var id int64
		if err := b.db.Pool.QueryRow(context.Background(), `
			INSERT INTO conformance_runs (provider, model, prompt, prompt_version, passed, cases_total, cases_passed, cases,
				router_version, started_at, finished_at, prompt_digest, target_digest, legacy)
			VALUES ($1, $2, 'triage', $3, $4, 8, CASE WHEN $4 THEN 8 ELSE 6 END, '[{"name": "case-1"}]', 'test',
				now() - ($5::bigint + $6::bigint) * interval '1 microsecond', now() - $5::bigint * interval '1 microsecond',
				CASE WHEN $7 THEN NULL ELSE repeat('a', 64) END, CASE WHEN $7 THEN NULL ELSE repeat('b', 64) END, $7)
			RETURNING id`,
			r.provider, r.model, r.version, r.passed, r.finishedAgo.Microseconds(), r.ran.Microseconds(), r.legacy).Scan(&id); err != nil {
			t.Fatalf("store %s: %v", r.name, err)
		}
		if _, dup := ids[r.name]; dup {
			t.Fatalf("two rows named %s", r.name)
		}
		ids[r.name] = id
	}
	return ids
}

// conformanceAnswers is everything the gate (ConformanceStandingOf, for
// every provider, model or any, and version asked) and the operator views
// (LatestConformanceRuns, with the cases, for all and for each provider)
// answer, but for the database clock's reading and the ages measured on it.
func conformanceAnswers(t *testing.T, b *bundle, providers, models, versions []string) map[string]any {
	t.Helper()
	ctx := context.Background()
	const maxAge = 7 * day
	out := map[string]any{}
	for _, p := range append([]string{""}, providers...) {
		runs, err := b.st.LatestConformanceRuns(ctx, store.ConformanceFilter{Provider: p, WithCases: true, MaxAge: maxAge})
		if err != nil {
			t.Fatal(err)
		}
		out["views of "+p] = runs
	}
	for _, p := range providers {
		for _, m := range append([]string{""}, models...) {
			for _, v := range versions {
				st, err := b.st.ConformanceStandingOf(ctx, p, m, "triage", v, maxAge)
				if err != nil {
					t.Fatal(err)
				}
				st.Now, st.LastPassAge = time.Time{}, 0
				out[fmt.Sprintf("gate on %s/%s@%s", p, m, v)] = *st
			}
		}
	}
	return out
}

// pruneConformance runs a whole walk of DeleteOldConformanceRunsFrom, batch
// by batch, and returns how many runs it deleted.
func pruneConformance(t *testing.T, b *bundle, after time.Duration, batch int) int {
	t.Helper()
	total, from := 0, int64(0)
	for range 1000 {
		n, next, done, err := b.st.DeleteOldConformanceRunsFrom(context.Background(), after, batch, from)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if done {
			return total
		}
		if next <= from {
			t.Fatalf("the walk did not move on from %d", from)
		}
		from = next
	}
	t.Fatal("the walk never ended")
	return 0
}

func remainingConformance(t *testing.T, b *bundle, ids map[string]int64) map[string]bool {
	t.Helper()
	left := map[string]bool{}
	for name, id := range ids {
		if count(t, b, fmt.Sprintf("SELECT count(*) FROM conformance_runs WHERE id = %d", id)) == 1 {
			left[name] = true
		}
	}
	return left
}

// Conformance history was never deleted, and grew with every run of the
// suite. Retention deletes the runs that finished longer ago than
// retention.conformance_runs, but never one the gate or the operator views
// read: the gate and the views answer the same after as before, for a
// history where each kept category is the only thing keeping some run — a
// group's latest run, its latest pass, a failure older than the window that
// finished while the group's latest (a pass) ran, and one that did so while
// the latest of another model ran (the gate asked for any model) — legacy
// runs among them.
func TestConformanceRetentionKeepsWhatTheGateAndViewsRead(t *testing.T) {
	b := setup(t)
	const window = 30 * day
	ids := storeConfRows(t, b, []confRow{
		// An ordinary group: its latest run is young, its latest pass old.
		{name: "a-old-pass", provider: "p1", model: "m1", version: "1", passed: true, finishedAgo: 100 * day, ran: time.Minute},
		{name: "a-old-fail", provider: "p1", model: "m1", version: "1", finishedAgo: 90 * day, ran: time.Minute},
		{name: "a-last-pass", provider: "p1", model: "m1", version: "1", passed: true, finishedAgo: 60 * day, ran: time.Minute},
		{name: "a-fail-after-pass", provider: "p1", model: "m1", version: "1", finishedAgo: 45 * day, ran: time.Minute},
		{name: "a-latest", provider: "p1", model: "m1", version: "1", finishedAgo: day, ran: time.Minute},
		// A group all older than the window.
		{name: "b-old-fail", provider: "p1", model: "m1", version: "2", finishedAgo: 80 * day, ran: time.Minute},
		{name: "b-last-pass", provider: "p1", model: "m1", version: "2", passed: true, finishedAgo: 70 * day, ran: time.Minute},
		{name: "b-fail", provider: "p1", model: "m1", version: "2", finishedAgo: 65 * day, ran: time.Minute},
		{name: "b-latest", provider: "p1", model: "m1", version: "2", finishedAgo: 40 * day, ran: time.Minute},
		// Another model's passes: the gate names the model that passed.
		{name: "c-old-pass", provider: "p1", model: "m2", version: "1", passed: true, finishedAgo: 200 * day, ran: time.Minute},
		{name: "c-latest", provider: "p1", model: "m2", version: "1", passed: true, finishedAgo: 100 * day, ran: time.Minute},
		// An overlapping failure older than the window: the latest run
		// passed, but a failure finished while it ran.
		{name: "d-old-fail", provider: "p2", model: "m1", version: "1", finishedAgo: 50*day + 20*time.Minute, ran: time.Minute},
		{name: "d-overlap", provider: "p2", model: "m1", version: "1", finishedAgo: 50*day + 5*time.Minute, ran: time.Minute},
		{name: "d-latest", provider: "p2", model: "m1", version: "1", passed: true, finishedAgo: 50 * day, ran: 10 * time.Minute},
		// ... and a later run of another model, which started after that
		// failure finished: only the model's own reading needs it.
		{name: "d-other-model", provider: "p2", model: "m2", version: "1", passed: true, finishedAgo: 49 * day, ran: time.Minute},
		// The same across models: m2's failure finished while m1's pass,
		// the latest of p3 on triage@1 for any model, ran; m2's own later
		// pass started after it, so only the any-model reading needs it.
		{name: "e-old", provider: "p3", model: "m2", version: "1", finishedAgo: 55 * day, ran: time.Minute},
		{name: "e-overlap-any", provider: "p3", model: "m2", version: "1", finishedAgo: 50*day + 5*time.Minute, ran: time.Minute},
		{name: "e-m2-latest", provider: "p3", model: "m2", version: "1", passed: true, finishedAgo: 50*day + 2*time.Minute, ran: time.Minute},
		{name: "e-m1-latest", provider: "p3", model: "m1", version: "1", passed: true, finishedAgo: 50 * day, ran: 10 * time.Minute},
		// Legacy runs (no digests: they count for any content and target).
		{name: "f-old-pass", provider: "p4", model: "m1", version: "1", passed: true, finishedAgo: 400 * day, ran: time.Minute, legacy: true},
		{name: "f-last-pass", provider: "p4", model: "m1", version: "1", passed: true, finishedAgo: 300 * day, ran: time.Minute, legacy: true},
		{name: "f-latest", provider: "p4", model: "m1", version: "1", finishedAgo: 250 * day, ran: time.Minute, legacy: true},
		// Never passed; the latest run took no time (started_at is
		// finished_at), so that only being the latest keeps it.
		{name: "g-old", provider: "p5", model: "m1", version: "1", finishedAgo: 100 * day, ran: time.Minute},
		{name: "g-latest", provider: "p5", model: "m1", version: "1", finishedAgo: 90 * day},
		// Young runs are kept whatever they are, and fresh passes stay
		// fresh.
		{name: "h-young-fail", provider: "p1", model: "m1", version: "3", finishedAgo: 2 * day, ran: time.Minute},
		{name: "h-young-pass", provider: "p1", model: "m1", version: "3", passed: true, finishedAgo: 20 * day, ran: time.Minute},
		{name: "h-latest", provider: "p1", model: "m1", version: "3", passed: true, finishedAgo: time.Hour, ran: time.Minute},
	})
	providers, models, versions := []string{"p1", "p2", "p3", "p4", "p5", "p6"}, []string{"m1", "m2", "m3"}, []string{"1", "2", "3"}
	before := conformanceAnswers(t, b, providers, models, versions)

	deleted := pruneConformance(t, b, window, 2)

	wantGone := []string{"a-old-pass", "a-old-fail", "a-fail-after-pass", "b-old-fail", "b-fail", "c-old-pass", "d-old-fail", "e-old", "f-old-pass", "g-old"}
	left := remainingConformance(t, b, ids)
	for name := range ids {
		if gone := !left[name]; gone != slices.Contains(wantGone, name) {
			t.Errorf("run %s: deleted %v, want %v", name, gone, !gone)
		}
	}
	if deleted != len(wantGone) {
		t.Errorf("the walk reported %d runs deleted, want %d", deleted, len(wantGone))
	}
	after := conformanceAnswers(t, b, providers, models, versions)
	for k, v := range before {
		if !reflect.DeepEqual(v, after[k]) {
			t.Errorf("%s changed:\n before %+v\n after  %+v", k, v, after[k])
		}
	}

	// A second walk finds nothing more to delete.
	if n := pruneConformance(t, b, window, 2); n != 0 {
		t.Errorf("a second walk deleted %d runs, want 0", n)
	}
}

// Once a group has a newer run, its former latest run and pass are deleted
// when old enough: what is kept follows the history, so it stays bounded by
// the groups.
func TestConformanceRetentionDeletesFormerLatestRuns(t *testing.T) {
	b := setup(t)
	ids := storeConfRows(t, b, []confRow{
		{name: "old-pass", provider: "p1", model: "m1", version: "1", passed: true, finishedAgo: 60 * day, ran: time.Minute},
		{name: "old-latest", provider: "p1", model: "m1", version: "1", finishedAgo: 50 * day, ran: time.Minute},
	})
	if n := pruneConformance(t, b, 30*day, 100); n != 0 {
		t.Fatalf("deleted %d runs of a group's latest run and pass, want 0", n)
	}
	record(t, b, store.NewConformanceRun{Provider: "p1", Model: "m1", Prompt: "triage", PromptVersion: "1", Passed: true,
		CasesTotal: 1, CasesPassed: 1, PromptDigest: testPromptDigest, TargetDigest: testTargetDigest, Duration: time.Second})
	if n := pruneConformance(t, b, 30*day, 100); n != 2 {
		t.Fatalf("deleted %d runs, want the 2 a newer pass replaced", n)
	}
	if left := remainingConformance(t, b, ids); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
}

// A batch examines at most its size of runs and the walk goes on from where
// it got to; a walk ends at the last run, or at a batch of runs too young.
func TestConformanceRetentionWalksInBatches(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	var rows []confRow
	for i := range 7 {
		rows = append(rows, confRow{name: fmt.Sprint("old-", i), provider: "p1", model: "m1", version: "1", finishedAgo: time.Duration(100-i) * day, ran: time.Minute})
	}
	for i := range 3 {
		rows = append(rows, confRow{name: fmt.Sprint("young-", i), provider: "p1", model: "m1", version: "1", finishedAgo: time.Duration(3-i) * day, ran: time.Minute})
	}
	ids := storeConfRows(t, b, rows)
	n, next, done, err := b.st.DeleteOldConformanceRunsFrom(ctx, 30*day, 3, 0)
	if err != nil || n != 3 || next != ids["old-2"] || done {
		t.Fatalf("first batch: deleted %d, next %d, done %v, %v; want 3, %d, not done", n, next, done, err, ids["old-2"])
	}
	n, next, done, err = b.st.DeleteOldConformanceRunsFrom(ctx, 30*day, 3, next)
	if err != nil || n != 3 || next != ids["old-5"] || done {
		t.Fatalf("second batch: deleted %d, next %d, done %v, %v; want 3, %d, not done", n, next, done, err, ids["old-5"])
	}
	// old-6 is the last old run; the young runs after it end the walk.
	n, next, done, err = b.st.DeleteOldConformanceRunsFrom(ctx, 30*day, 3, next)
	if err != nil || n != 1 || next != ids["young-1"] || done {
		t.Fatalf("third batch: deleted %d, next %d, done %v, %v; want 1 (old-6: young runs follow it), %d, not done", n, next, done, err, ids["young-1"])
	}
	n, _, done, err = b.st.DeleteOldConformanceRunsFrom(ctx, 30*day, 3, next)
	if err != nil || n != 0 || !done {
		t.Fatalf("last batch: deleted %d, done %v, %v; want 0, done", n, done, err)
	}
	if got := count(t, b, "SELECT count(*) FROM conformance_runs"); got != 3 {
		t.Fatalf("%d runs left, want the 3 young ones", got)
	}
	for _, after := range []time.Duration{0, -time.Hour} {
		if _, _, _, err := b.st.DeleteOldConformanceRunsFrom(ctx, after, 3, 0); err == nil {
			t.Errorf("a retention of %s was taken (it would delete every run not kept, however young)", after)
		}
	}
}
