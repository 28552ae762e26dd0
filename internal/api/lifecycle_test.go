package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
)

type listPage struct {
	Data []struct {
		ID    string `json:"id"`
		Owner string `json:"owner"`
		State string `json:"state"`
	} `json:"data"`
	NextCursor *string `json:"next_cursor"`
}

func (b *bundle) list(t *testing.T, apiKey, query string) listPage {
	t.Helper()
	r := b.do(t, "GET", "/v1/jobs"+query, apiKey, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/jobs%s: %d %s", query, r.status, r.raw)
	}
	var p listPage
	if err := jsonUnmarshal(r.raw, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// Listing returns only the caller's jobs, newest first, and pages stably while
// new jobs arrive: every job that existed at the first page is seen exactly
// once, in order, and none of the newer ones slip into later pages.
func TestListJobsPaginatesStablyWithinOwner(t *testing.T) {
	b := setup(t, options{})
	var acme []string // newest first
	for i := range 7 {
		r := b.create(t, acmeKey, fmt.Sprint("a", i), triageBody(fmt.Sprint("acme ", i)), "Prefer", "wait=10")
		acme = append([]string{r.job()}, acme...)
	}
	for i := range 3 {
		b.create(t, globexKey, fmt.Sprint("g", i), triageBody("globex"), "Prefer", "wait=10")
	}
	var seen []string
	page := b.list(t, acmeKey, "?limit=3")
	for n := 0; ; n++ {
		for _, j := range page.Data {
			if j.Owner != "acme" {
				t.Fatalf("listing crossed owners: %+v", j)
			}
			seen = append(seen, j.ID)
		}
		if n == 0 { // new jobs arrive between pages
			for i := range 2 {
				b.create(t, acmeKey, fmt.Sprint("late", i), triageBody("late"), "Prefer", "wait=10")
			}
		}
		if page.NextCursor == nil {
			break
		}
		page = b.list(t, acmeKey, "?limit=3&cursor="+*page.NextCursor)
	}
	if fmt.Sprint(seen) != fmt.Sprint(acme) {
		t.Fatalf("pages gave\n%v\nwant\n%v", seen, acme)
	}
	if p := b.list(t, globexKey, "?limit=200"); len(p.Data) != 3 || p.NextCursor != nil {
		t.Fatalf("globex sees %d jobs (cursor %v), want its 3", len(p.Data), p.NextCursor)
	}
	if p := b.list(t, acmeKey, "?state=failed"); len(p.Data) != 0 {
		t.Fatalf("state filter: %d failed jobs", len(p.Data))
	}
	if p := b.list(t, acmeKey, "?state=succeeded&operation=triage&created_after=2000-01-01T00:00:00Z&limit=200"); len(p.Data) != 9 {
		t.Fatalf("filters: %d jobs, want 9", len(p.Data))
	}
	if p := b.list(t, acmeKey, "?created_before=2000-01-01T00:00:00Z"); len(p.Data) != 0 {
		t.Fatalf("created_before: %d jobs", len(p.Data))
	}
	for _, q := range []string{"?state=done", "?limit=0", "?limit=201", "?cursor=nope", "?created_after=yesterday"} {
		if r := b.do(t, "GET", "/v1/jobs"+q, acmeKey, ""); r.status != http.StatusBadRequest {
			t.Fatalf("GET /v1/jobs%s: %d, want 400", q, r.status)
		}
	}
}

// The listing statement is a scan of jobs_owner_created_id, the keyset
// condition an index condition (not a filter over the owner's whole history).
func TestListJobsUsesTheKeysetIndex(t *testing.T) {
	b := setup(t, options{})
	ctx := context.Background()
	_, err := b.db.Pool.Exec(ctx, `INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, created_at)
		SELECT gen_random_uuid(), 'owner-' || (i % 50), 'triage', 'k' || i, '\x00', '1', 'default', '{}', now() - i * interval '1 second'
		FROM generate_series(1, 20000) i`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `ANALYZE jobs`); err != nil {
		t.Fatal(err)
	}
	plan, err := b.db.Store.ExplainListJobs(ctx, store.ListFilter{Owner: "owner-7", Limit: 50,
		After: &store.ListPosition{CreatedAt: time.Now().Add(-time.Hour), ID: "00000000-0000-0000-0000-000000000000"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("plan:\n%s", plan)
	if !containsAll(plan, "Index Scan using jobs_owner_created_id", "Index Cond: ((owner = 'owner-7'::text) AND (ROW(created_at, id) <") {
		t.Fatalf("the listing does not use the keyset index:\n%s", plan)
	}
}

func TestJobEventsEndpoint(t *testing.T) {
	b := setup(t, options{})
	ctx := context.Background()
	if err := b.db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
	r := b.create(t, acmeKey, "k1", triageBody("x"), "Prefer", "wait=10")
	ev := b.do(t, "GET", "/v1/jobs/"+r.job()+"/events", acmeKey, "")
	data, _ := ev.body["data"].([]any)
	if ev.status != http.StatusOK || len(data) != 1 {
		t.Fatalf("events: %d %s", ev.status, ev.raw)
	}
	e := data[0].(map[string]any)
	if e["type"] != "job.succeeded" || e["status"] != "pending" || e["id"] == "" {
		t.Fatalf("event: %v", e)
	}
	if ev := b.do(t, "GET", "/v1/jobs/"+r.job()+"/events", globexKey, ""); ev.status != http.StatusNotFound {
		t.Fatalf("another owner's job events: %d", ev.status)
	}
}

func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	b := setup(t, options{})
	for _, h := range []string{"bearer " + acmeKey, "BEARER " + acmeKey, "Bearer  " + acmeKey} {
		req, _ := http.NewRequest("GET", b.srv.URL+"/v1/jobs", nil)
		req.Header.Set("Authorization", h)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("Authorization %q: %d", h, resp.StatusCode)
		}
	}
	if r := b.do(t, "GET", "/v1/jobs", "", "", "Authorization", "Basic "+acmeKey); r.status != http.StatusUnauthorized {
		t.Fatalf("Basic scheme: %d", r.status)
	}
}

// A key revoked in the database is refused by another replica (a second API
// server on the same database) once its cache entry expires, and at once by a
// replica without a cache.
func TestRevokedKeyIsRefusedOnAnotherReplica(t *testing.T) {
	b := setup(t, options{})
	ctx := context.Background()
	k, err := b.db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	replica := func(ttl time.Duration) *httptest.Server {
		auth := &api.CachedAuth{Next: &api.KeyAuth{Store: b.db.Store}, TTL: ttl, Now: clock}
		srv := httptest.NewServer(api.New(api.Config{}, api.Deps{Store: b.db.Store, Auth: auth}))
		t.Cleanup(srv.Close)
		return srv
	}
	cached, uncached := replica(5*time.Second), replica(0)
	get := func(srv *httptest.Server) int {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/jobs", nil)
		req.Header.Set("Authorization", "Bearer "+k.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if get(cached) != 200 || get(uncached) != 200 {
		t.Fatal("a new stored key is refused")
	}
	if err := b.db.Store.RevokeAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if c := get(uncached); c != http.StatusUnauthorized {
		t.Fatalf("uncached replica after revocation: %d", c)
	}
	if c := get(cached); c != http.StatusOK {
		t.Fatalf("within the TTL the cached answer stands: %d (the cache is not caching)", c)
	}
	now.Add(int64(5 * time.Second))
	if c := get(cached); c != http.StatusUnauthorized {
		t.Fatalf("cached replica after the TTL: %d, want 401", c)
	}
	if err := b.db.Store.RevokeAPIKey(ctx, 999999); err != store.ErrNotFound {
		t.Fatalf("revoking an unknown id: %v", err)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
