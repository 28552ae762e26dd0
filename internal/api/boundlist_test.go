package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/api"
)

// A page of GET /v1/jobs filtered by state or operation examines a bounded
// number of the owner's jobs (here 5), so it may come back short or empty,
// with a next_cursor that goes on after the last job examined: a client
// paging until next_cursor is null sees every match exactly once, in order.
// The cursor of an empty page is bound to its filters like any other.
func TestListJobsPagesThroughBoundedWindows(t *testing.T) {
	b := setup(t, options{})
	api.SetListScan(t, 5)
	ctx := context.Background()
	// 40 jobs of acme, one a second: failed at 7, 18 and 31 (1 the newest),
	// operation "summarize" at 2, 23 and 40; a failed job of globex among them.
	_, err := b.db.Pool.Exec(ctx, `
		INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input,
			state, completed_by, result, created_at)
		SELECT gen_random_uuid(), 'acme', CASE WHEN i IN (2, 23, 40) THEN 'summarize' ELSE 'triage' END,
			'k' || i, '\x00', '1', 'default', '{}', s.state,
			CASE WHEN s.state = 'succeeded' THEN gen_random_uuid() END,
			CASE WHEN s.state = 'succeeded' THEN '{}'::jsonb END,
			now() - i * interval '1 second'
		FROM generate_series(1, 40) i,
			LATERAL (SELECT CASE WHEN i IN (7, 18, 31) THEN 'failed' ELSE 'succeeded' END AS state) s;
		INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state, created_at)
		VALUES (gen_random_uuid(), 'globex', 'triage', 'g', '\x00', '1', 'default', '{}', 'failed', now() - interval '10 seconds')`)
	if err != nil {
		t.Fatal(err)
	}
	want := func(cond string) []string {
		rows, err := b.db.Pool.Query(ctx, `SELECT id::text FROM jobs WHERE owner = 'acme' AND `+cond+` ORDER BY created_at DESC, id DESC`)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	emptyCursor := map[string]string{} // a next_cursor of an empty page, by query
	for _, tc := range []struct{ query, cond string }{
		{"state=failed", "state = 'failed'"},
		{"operation=summarize", "operation = 'summarize'"},
		{"state=failed&operation=summarize", "false"},
	} {
		var seen []string
		var sizes []int
		page := b.list(t, acmeKey, "?limit=2&"+tc.query)
		for n := 0; ; n++ {
			if n == 100 {
				t.Fatalf("%s: no end after 100 pages (sizes %v)", tc.query, sizes)
			}
			for _, j := range page.Data {
				if j.Owner != "acme" {
					t.Fatalf("%s: listing crossed owners: %+v", tc.query, j)
				}
				seen = append(seen, j.ID)
			}
			sizes = append(sizes, len(page.Data))
			if page.NextCursor == nil {
				break
			}
			if len(page.Data) == 0 {
				emptyCursor[tc.query] = *page.NextCursor
			}
			page = b.list(t, acmeKey, "?limit=2&"+tc.query+"&cursor="+url.QueryEscape(*page.NextCursor))
		}
		if w := want(tc.cond); fmt.Sprint(seen) != fmt.Sprint(w) {
			t.Errorf("%s: pages %v gave\n%v\nwant\n%v", tc.query, sizes, seen, w)
		}
		// 40 jobs, 5 examined a page: 8 pages, most of them empty.
		if len(sizes) != 8 {
			t.Errorf("%s: page sizes %v; want 8 pages, one per 5 jobs examined", tc.query, sizes)
		}
	}
	c, ok := emptyCursor["state=failed"]
	if !ok {
		t.Fatal("state=failed: no empty page with a next_cursor")
	}
	// The empty page's cursor goes on with its filters (any limit), and is
	// refused with others.
	if r := b.do(t, "GET", "/v1/jobs?state=failed&limit=7&cursor="+url.QueryEscape(c), acmeKey, ""); r.status != http.StatusOK {
		t.Errorf("the empty page's cursor with its filters: %d %s", r.status, r.raw)
	}
	if r := b.do(t, "GET", "/v1/jobs?state=succeeded&cursor="+url.QueryEscape(c), acmeKey, ""); r.status != http.StatusBadRequest {
		t.Errorf("the empty page's cursor with other filters: %d, want 400", r.status)
	}
}
