package store_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// conformanceHistory stores, for each of 2 providers × 2 models × 2 prompt
// versions of triage (8 groups), perGroup runs a second apart: a pass every
// 10th, the latest four failing, and p2's m2 on version 2 never passing.
func conformanceHistory(t *testing.T, b *bundle, perGroup int) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `
		INSERT INTO conformance_runs (provider, model, prompt, prompt_version, passed, cases_total, cases_passed,
			router_version, started_at, finished_at, prompt_digest, target_digest)
		SELECT p, m, 'triage', v, ok, 8, CASE WHEN ok THEN 8 ELSE 6 END, 'test',
			now() - i * interval '1 second' - interval '3 seconds', now() - i * interval '1 second', repeat('a', 64), repeat('b', 64)
		FROM unnest(ARRAY['p1', 'p2']) p, unnest(ARRAY['m1', 'm2']) m, unnest(ARRAY['1', '2']) v,
			generate_series(1, $1::int) i,
			LATERAL (SELECT i % 10 = 5 AND NOT (p = 'p2' AND m = 'm2' AND v = '2') AS ok) x`, perGroup); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `ANALYZE conformance_runs`); err != nil {
		t.Fatal(err)
	}
}

// The operator views' latest run of each provider × model × prompt × version
// (LatestConformanceRuns) and the gate's standing (ConformanceStandingOf)
// read a number of rows that grows with the groups, not with the history
// of runs, which nothing deletes. LatestConformanceRuns read and sorted the
// whole table (a DISTINCT ON with no index on the model): 36,520 rows for
// 20 latest runs. The gate asked for a model read through the runs of the
// target's other models, and its other passed versions and models every
// pass of the prompt. Both plan modes: the dashboard and the gate run their
// statements often enough, through pgx's statement cache, to get generic
// plans, which cannot fold an empty-means-any parameter away.
func TestConformanceReadsBoundedByGroups(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	const groups, perGroup = 8, 2000
	conformanceHistory(t, b, perGroup)
	want := latestByDistinctOn(t, b)
	if len(want) != groups {
		t.Fatalf("%d groups stored, want %d", len(want), groups)
	}
	for _, mode := range []string{"auto", "force_generic_plan"} {
		u, err := url.Parse(b.db.URL)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("plan_cache_mode", mode)
		u.RawQuery = q.Encode()
		pool, plans := explainingPool(t, &bundle{db: &testdb.DB{URL: u.String()}})
		st := store.New(pool, store.Options{KeyRetention: time.Hour})
		plans("")

		for _, f := range []store.ConformanceFilter{{MaxAge: time.Hour}, {Provider: "p2", MaxAge: time.Hour}, {Prompt: "triage", WithCases: true}} {
			got, err := st.LatestConformanceRuns(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var exp []store.ConformanceRun
			for _, r := range want {
				if f.Provider == "" || r.Provider == f.Provider {
					exp = append(exp, r)
				}
			}
			if !sameLatest(got, exp, f.MaxAge > 0) {
				t.Errorf("%s, %+v: latest runs %v, want %v (DISTINCT ON)", mode, f, summary(got), summary(exp))
			}
			reads := plans("THEN l.cases END, l.suite_digest")
			if len(reads) != 1 {
				t.Fatalf("%s: %d plans of the latest runs' statement reported, want 1", mode, len(reads))
			}
			// Per group: the lookup that finds it, its latest run (and, when
			// that passed, the failures that finished while it ran: none
			// here), that run again by its id, its latest pass.
			read, most := reads[0].Plan.rowsRead("conformance_runs"), float64(4*len(exp)+2)
			t.Logf("%s, %+v: read %.0f rows of conformance_runs for %d groups", mode, f, read, len(exp))
			if read > most {
				t.Errorf("%s, %+v: read %.0f rows of conformance_runs for %d groups (history %d), want at most %.0f\n%s",
					mode, f, read, len(exp), groups*perGroup, most, reads[0].JSON)
			}
		}

		for _, tc := range []struct {
			provider, model, version string
			passedVersions           []string
			passedModels             []string
		}{
			{"p1", "m1", "1", []string{"2"}, []string{"m2"}},
			{"p2", "m2", "2", []string{"1"}, []string{"m1"}}, // never passed
			{"p1", "", "1", []string{"2"}, []string{}},
			{"p1", "m3", "1", []string{}, []string{"m1", "m2"}}, // no run of m3
		} {
			s, err := st.ConformanceStandingOf(ctx, tc.provider, tc.model, "triage", tc.version, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			var latest *int64
			var lastPass *time.Time
			if err := b.db.Pool.QueryRow(ctx, `SELECT
				(SELECT id FROM conformance_runs WHERE provider = $1 AND ($2 = '' OR model = $2) AND prompt = 'triage' AND prompt_version = $3
				 ORDER BY finished_at DESC, id DESC LIMIT 1),
				(SELECT max(finished_at) FROM conformance_runs WHERE provider = $1 AND ($2 = '' OR model = $2) AND prompt = 'triage'
				 AND prompt_version = $3 AND passed)`, tc.provider, tc.model, tc.version).Scan(&latest, &lastPass); err != nil {
				t.Fatal(err)
			}
			if (s.Latest == nil) != (latest == nil) || s.Latest != nil && s.Latest.ID != *latest ||
				(s.LastPassAt == nil) != (lastPass == nil) || s.LastPassAt != nil && !s.LastPassAt.Equal(*lastPass) ||
				!slices.Equal(s.PassedVersions, tc.passedVersions) || !slices.Equal(s.PassedModels, tc.passedModels) {
				t.Errorf("%s: standing of %s/%s@%s: latest %v, last pass %v, passed versions %v, models %v; want latest %v, %v, %v, %v",
					mode, tc.provider, tc.model, tc.version, s.Latest, s.LastPassAt, s.PassedVersions, s.PassedModels,
					latest, lastPass, tc.passedVersions, tc.passedModels)
			}
			reads := plans("FROM (SELECT 1) AS one")
			if len(reads) != 1 {
				t.Fatalf("%s: %d plans of the standing's statement reported, want 1", mode, len(reads))
			}
			// The latest run and pass, the passed versions (2, one more
			// lookup each) and models (2, two more lookups each).
			read, most := reads[0].Plan.rowsRead("conformance_runs"), float64(2*groups)
			t.Logf("%s, %s/%s@%s: read %.0f rows of conformance_runs", mode, tc.provider, tc.model, tc.version, read)
			if read > most {
				t.Errorf("%s, %s/%s@%s: read %.0f rows of conformance_runs (history %d), want at most %.0f\n%s",
					mode, tc.provider, tc.model, tc.version, read, groups*perGroup, most, reads[0].JSON)
			}
		}
	}
}

// latestByDistinctOn is what LatestConformanceRuns returned before it was
// bounded by the groups (the whole history read): each group's latest run
// and last pass, in its order.
func latestByDistinctOn(t *testing.T, b *bundle) []store.ConformanceRun {
	t.Helper()
	rows, err := b.db.Pool.Query(context.Background(), `
		SELECT l.id, l.provider, l.model, l.prompt_version, l.passed, p.finished_at
		FROM (SELECT DISTINCT ON (provider, model, prompt, prompt_version) * FROM conformance_runs
			ORDER BY provider, model, prompt, prompt_version, finished_at DESC, id DESC) l
		LEFT JOIN LATERAL (SELECT finished_at FROM conformance_runs WHERE provider = l.provider AND model = l.model
			AND prompt = l.prompt AND prompt_version = l.prompt_version AND passed ORDER BY finished_at DESC LIMIT 1) p ON true
		ORDER BY l.provider, l.prompt, l.prompt_version, l.model`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []store.ConformanceRun
	for rows.Next() {
		var r store.ConformanceRun
		if err := rows.Scan(&r.ID, &r.Provider, &r.Model, &r.PromptVersion, &r.Passed, &r.LastPassAt); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameLatest compares runs and their last passes, in order; fresh is whether
// a pass of the history (within 2,000 s) is fresh.
func sameLatest(got, want []store.ConformanceRun, fresh bool) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.ID != w.ID || (g.LastPassAt == nil) != (w.LastPassAt == nil) || g.LastPassAt != nil && !g.LastPassAt.Equal(*w.LastPassAt) ||
			g.Fresh != (fresh && w.LastPassAt != nil) {
			return false
		}
	}
	return true
}

func summary(runs []store.ConformanceRun) []string {
	out := make([]string, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.Provider+"/"+r.Model+"@"+r.PromptVersion)
	}
	return out
}
