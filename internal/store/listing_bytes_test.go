package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A page of large jobs is cut by MaxBytes: the store stops reading once the
// jobs it read come to more than the bound (a job carries its whole input:
// Limit jobs alone could be hundreds of MiB read at once), the page ends at
// its last job with a position after it, every page holds at least one job,
// and paging on returns every job exactly once, in order — in the plain
// keyset listing and in the scan-bounded one (a filter). Before, a page read
// all of its Limit jobs whatever their size. Found by review.
func TestListJobsPageIsBoundedByBytes(t *testing.T) {
	b := setup(t)
	all := boundedHistory(t, b)
	ctx := context.Background()
	// Every job's input: 100,000 bytes.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET input = jsonb_build_object('t', repeat('x', 99992)) WHERE owner = 'acme'`); err != nil {
		t.Fatal(err)
	}
	const maxBytes = 350_000 // four inputs pass it
	for _, tc := range []struct {
		name string
		f    store.ListFilter
		want []string
	}{
		{"every job", store.ListFilter{Owner: "acme", Limit: 200, MaxBytes: maxBytes}, all},
		{"one operation (a scan-bounded page)", store.ListFilter{Owner: "acme", Operation: "triage", Limit: 200, Scan: 10, MaxBytes: maxBytes},
			slices.DeleteFunc(slices.Clone(all), func(id string) bool { return slices.Contains([]string{all[1], all[22], all[39]}, id) })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, sizes := listedPages(t, b.st, tc.f)
			if !slices.Equal(ids, tc.want) {
				t.Fatalf("paged %d jobs %v, want the %d in order %v (page sizes %v)", len(ids), ids, len(tc.want), tc.want, sizes)
			}
			for i, n := range sizes {
				if n > 4 {
					t.Fatalf("page %d held %d jobs of 100,000 bytes each with MaxBytes %d (sizes %v): not bounded", i, n, maxBytes, sizes)
				}
			}
		})
	}
	// A single job larger than the bound still makes a page.
	jobs, next, err := b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", Limit: 200, MaxBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].ID != all[0] || next == nil || next.ID != all[0] {
		t.Fatalf("MaxBytes below one job: %d jobs, next %+v; want the newest job alone and a position after it", len(jobs), next)
	}
}
