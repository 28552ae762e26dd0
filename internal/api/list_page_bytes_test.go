package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
)

// createLargeJobs stores n of acme's jobs whose inputs are each about size
// bytes, straight through the store, and returns their ids.
func createLargeJobs(t *testing.T, b *bundle, n, size int) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for i := range n {
		input := json.RawMessage(fmt.Sprintf(`{"subject":"large %d","body":%q}`, i, strings.Repeat("x", size)))
		fp, err := store.Fingerprint("triage", "", "", input)
		if err != nil {
			t.Fatal(err)
		}
		job, created, err := b.db.Store.CreateJob(context.Background(), store.NewJob{Owner: "acme", Operation: "triage",
			IdempotencyKey: fmt.Sprintf("large-%d", i), Fingerprint: fp, PromptVersion: "3", Route: "default", Input: input})
		if err != nil || !created {
			t.Fatalf("create job %d: %v created=%v", i, err, created)
		}
		ids[job.ID] = true
	}
	return ids
}

// A page of GET /v1/jobs is bounded by bytes as well as by limit: jobs whose
// inputs come to more than api.ListPageBytes are listed over several pages of
// at most that and one job more, even at limit=200, and a caller following
// next_cursor gets every job exactly once, newest first.
func TestListPageIsBoundedByBytes(t *testing.T) {
	b := setup(t, options{})
	const jobs, size = 14, 700 << 10 // 9.8 MB of inputs: three pages of 4 MiB
	want := createLargeJobs(t, b, jobs, size)
	seen := map[string]int{}
	pages := 0
	path := "/v1/jobs?limit=200"
	for {
		r := b.do(t, http.MethodGet, path, acmeKey, "")
		if r.status != http.StatusOK {
			t.Fatalf("page %d: %d %.300s", pages, r.status, r.raw)
		}
		pages++
		var page struct {
			Data       []json.RawMessage `json:"data"`
			NextCursor *string           `json:"next_cursor"`
		}
		if err := json.Unmarshal(r.raw, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Data) == 0 {
			t.Fatalf("page %d has no job (next_cursor %v)", pages, page.NextCursor)
		}
		before, largest := 0, 0 // the bytes of the page's jobs before its last; its largest job
		for i, raw := range page.Data {
			if i < len(page.Data)-1 {
				before += len(raw)
			}
			largest = max(largest, len(raw))
			var j struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(raw, &j); err != nil {
				t.Fatal(err)
			}
			seen[j.ID]++
		}
		if before > api.ListPageBytes || len(r.raw) > api.ListPageBytes+largest+1024 {
			t.Fatalf("page %d is %d bytes, %d of them jobs before its last, for %d jobs: "+
				"want at most %d bytes of jobs and one job more", pages, len(r.raw), before, len(page.Data), api.ListPageBytes)
		}
		if page.NextCursor == nil {
			break
		}
		path = "/v1/jobs?limit=200&cursor=" + *page.NextCursor
	}
	if pages < 3 {
		t.Fatalf("%d jobs of %d bytes came in %d pages, want at least 3", jobs, size, pages)
	}
	for id, n := range seen {
		if !want[id] || n != 1 {
			t.Fatalf("job %s listed %d times (one of ours: %v)", id, n, want[id])
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("paging listed %d jobs, want all %d", len(seen), len(want))
	}
}
