package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// wantListRejected asserts a 400 invalid-request problem whose detail
// contains every one of parts.
func wantListRejected(t *testing.T, b *bundle, query string, parts ...string) {
	t.Helper()
	r := b.do(t, "GET", "/v1/jobs"+query, acmeKey, "")
	typ, _ := r.body["type"].(string)
	detail, _ := r.body["detail"].(string)
	if r.status != http.StatusBadRequest || !strings.HasSuffix(typ, "/invalid-request") ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("GET /v1/jobs%s: %d %s, want a 400 invalid-request problem", query, r.status, r.raw)
		return
	}
	for _, p := range parts {
		if !strings.Contains(detail, p) {
			t.Errorf("GET /v1/jobs%s: detail %q does not say %q", query, detail, p)
		}
	}
}

// A parameter the listing does not read is a 400 naming it and the ones it
// reads: a typo (stat=failed) must not list every job as if it had filtered.
// A parameter given twice is a 400 naming it: each filter takes one value, and
// neither the first nor the last would be what the caller meant. So is a query
// string whose pairs cannot all be decoded, since the ones that cannot would
// be dropped.
func TestListRejectsUnknownAndRepeatedParameters(t *testing.T) {
	b := setup(t, options{})
	b.create(t, acmeKey, "k1", triageBody("one"), "Prefer", "wait=10")
	accepted := "state, operation, created_after, created_before, limit, cursor"
	wantListRejected(t, b, "?stat=failed", `"stat"`, accepted)
	wantListRejected(t, b, "?state=failed&Limit=5", `"Limit"`, accepted)
	wantListRejected(t, b, "?page=2&offset=10&state=succeeded", `"offset", "page"`, accepted)
	wantListRejected(t, b, "?=x", `""`, accepted)
	wantListRejected(t, b, "?"+strings.Repeat("x", 500)+"=1", `"`+strings.Repeat("x", 64)+`…"`)
	wantListRejected(t, b, "?state=failed&state=succeeded", "state given more than once")
	wantListRejected(t, b, "?limit=5&limit=5&state=failed", "limit given more than once")
	wantListRejected(t, b, "?cursor=a&cursor=b&operation=x&operation=y", "cursor, operation given more than once")
	wantListRejected(t, b, "?stat=failed&limit=1&limit=2", `"stat"`, "limit given more than once")
	wantListRejected(t, b, "?state=failed%zz", "cannot be decoded")
	wantListRejected(t, b, "?state=failed;limit=1", "cannot be decoded")
	// The parameters it reads, each once, still list.
	if p := b.list(t, acmeKey, "?state=succeeded&operation=triage&created_after=2000-01-01T00:00:00Z&created_before=2999-01-01T00:00:00Z&limit=5"); len(p.Data) != 1 {
		t.Errorf("all parameters once: %d jobs, want 1", len(p.Data))
	}
	if p := b.list(t, acmeKey, "?state=&operation="); len(p.Data) != 1 {
		t.Errorf("empty filters: %d jobs, want 1", len(p.Data))
	}
}

// A cursor continues only the listing it came from: sent with other filters
// it is a 400 that says to start again, and the same filters spelled otherwise
// (another offset, digits below the microsecond) are the same filters. The
// page size may change between pages.
func TestListCursorBoundToFilters(t *testing.T) {
	b := setup(t, options{})
	for i := range 4 {
		if r := b.create(t, acmeKey, fmt.Sprint("c", i), triageBody(fmt.Sprint("c", i)), "Prefer", "wait=10"); r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.raw)
		}
	}
	const filters = "&state=succeeded&operation=triage&created_after=2000-01-01T00:00:00Z"
	first := b.list(t, acmeKey, "?limit=1"+filters)
	if first.NextCursor == nil {
		t.Fatal("no next_cursor after the first of 4 jobs")
	}
	c := "&cursor=" + *first.NextCursor
	for _, other := range []string{
		"", // no filters at all
		"&state=succeeded&operation=triage",
		"&state=failed&operation=triage&created_after=2000-01-01T00:00:00Z",
		"&state=succeeded&operation=chat&created_after=2000-01-01T00:00:00Z",
		"&state=succeeded&operation=triage&created_after=2000-01-01T00:00:00.000001Z",
		"&state=succeeded&operation=triage&created_after=2000-01-01T00:00:00Z&created_before=2999-01-01T00:00:00Z",
	} {
		wantListRejected(t, b, "?limit=1"+other+c, "cursor was issued for different filters; start again without cursor")
	}
	seen := []string{first.Data[0].ID}
	for _, same := range []string{
		filters,
		"&operation=triage&created_after=2000-01-01T01:00:00%2B01:00&state=succeeded",
		"&state=succeeded&operation=triage&created_after=2000-01-01T00:00:00.000000999Z",
	} {
		p := b.list(t, acmeKey, "?limit=1"+same+c)
		if len(p.Data) != 1 || p.Data[0].ID == first.Data[0].ID {
			t.Errorf("cursor with the same filters as %q: %+v, want the second job", same, p.Data)
		}
	}
	// The rest, two to a page: every job once.
	for page := b.list(t, acmeKey, "?limit=1"+filters+c); ; {
		for _, j := range page.Data {
			seen = append(seen, j.ID)
		}
		if page.NextCursor == nil {
			break
		}
		page = b.list(t, acmeKey, "?limit=2"+filters+"&cursor="+*page.NextCursor)
	}
	if n := len(seen); n != 4 || seen[1] == seen[0] || seen[2] == seen[1] || seen[3] == seen[2] {
		t.Errorf("pages gave %v, want the 4 jobs once each", seen)
	}
}

// A cursor the router issued before cursors named their filters (only "t"
// and "id") still continues, whatever the filters: it cannot be checked, and
// it belongs to a listing already under way.
func TestListCursorWithoutFiltersStillWorks(t *testing.T) {
	b := setup(t, options{})
	var ids []string
	for i := range 2 {
		r := b.create(t, acmeKey, fmt.Sprint("old", i), triageBody("old"), "Prefer", "wait=10")
		ids = append(ids, r.job())
	}
	var newest struct {
		ID        string    `json:"id"`
		CreatedAt time.Time `json:"created_at"`
	}
	if err := b.db.Pool.QueryRow(context.Background(),
		`SELECT id::text, created_at FROM jobs WHERE owner = 'acme' ORDER BY created_at DESC, id DESC LIMIT 1`).
		Scan(&newest.ID, &newest.CreatedAt); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(newest)
	old := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"created_at"`, `"t"`, 1)))
	p := b.list(t, acmeKey, "?state=succeeded&limit=1&cursor="+old)
	if len(p.Data) != 1 || p.Data[0].ID == newest.ID {
		t.Errorf("old cursor after %s: %+v, want the other job of %v", newest.ID, p.Data, ids)
	}
}

// created_before=X lists the jobs created strictly before X, at any precision:
// a job created at T (PostgreSQL keeps microseconds) is listed for X = T plus
// half a microsecond and not for X = T; created_after=X likewise lists it for
// X = T minus half a microsecond and not for X = T.
func TestListCreatedBoundsWithNanoseconds(t *testing.T) {
	b := setup(t, options{})
	id := b.create(t, acmeKey, "ns", triageBody("ns"), "Prefer", "wait=10").job()
	var at time.Time
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT created_at FROM jobs WHERE id = $1`, id).Scan(&at); err != nil {
		t.Fatal(err)
	}
	half := 500 * time.Nanosecond
	for _, tc := range []struct {
		name  string
		bound time.Time
		want  int
	}{
		{"created_before", at.Add(half), 1},
		{"created_before", at.Add(time.Nanosecond), 1},
		{"created_before", at, 0},
		{"created_before", at.Add(-time.Nanosecond), 0},
		{"created_after", at.Add(-half), 1},
		{"created_after", at, 0},
		{"created_after", at.Add(time.Nanosecond), 0},
	} {
		q := "?" + tc.name + "=" + tc.bound.UTC().Format(time.RFC3339Nano)
		if p := b.list(t, acmeKey, q); len(p.Data) != tc.want {
			t.Errorf("GET /v1/jobs%s (job created at %s): %d jobs, want %d", q, at.UTC().Format(time.RFC3339Nano), len(p.Data), tc.want)
		}
	}
}
