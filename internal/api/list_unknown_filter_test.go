package api_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
)

// wantListRejectedAs is wantListRejected that also asserts the problem's
// title.
func wantListRejectedAs(t *testing.T, b *bundle, query, title string, parts ...string) {
	t.Helper()
	wantListRejected(t, b, query, parts...)
	r := b.do(t, "GET", "/v1/jobs"+query, acmeKey, "")
	if got, _ := r.body["title"].(string); got != title {
		t.Errorf("GET /v1/jobs%s: title %q, want %q", query, got, title)
	}
}

// An operation that this router does not run and that none of the caller's
// jobs has is a 400 naming the value, the operations there are and the one
// it was likely meant to be, not an empty page: operation=chat or a typo
// (traige) listed nothing, as if the caller had no such job (found by
// review). Known operations still list, also when no job has them.
func TestListRejectsUnknownOperation(t *testing.T) {
	b := setup(t, options{})
	if r := b.create(t, acmeKey, "k1", triageBody("one"), "Prefer", "wait=10"); r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	const all = "chat:default, invoice, triage"
	wantListRejectedAs(t, b, "?operation=traige", "Unknown operation",
		`operation "traige" is not an operation this router runs`, "did you mean triage?", all,
		"leave operation out to list every operation")
	wantListRejectedAs(t, b, "?operation=Triage", "Unknown operation", `"Triage"`, "did you mean triage?")
	wantListRejectedAs(t, b, "?operation=chat", "Unknown operation", `"chat"`,
		"chat completion jobs have the operation chat:<route>, here chat:default", all)
	wantListRejectedAs(t, b, "?operation=chat:", "Unknown operation", "chat:<route>, here chat:default")
	wantListRejectedAs(t, b, "?operation=default", "Unknown operation",
		"did you mean chat:default (chat completions of route default)?")
	wantListRejectedAs(t, b, "?operation=zzz&limit=3", "Unknown operation", `"zzz"`, all)
	wantListRejected(t, b, "?operation="+strings.Repeat("x", 300), `"`+strings.Repeat("x", 64)+`…"`)
	if p := b.list(t, acmeKey, "?operation=triage"); len(p.Data) != 1 {
		t.Errorf("operation=triage: %d jobs, want 1", len(p.Data))
	}
	// With a state or a time bound an empty page says nothing of the
	// operation: listed empty, not refused (rdiff47).
	for _, q := range []string{"?operation=invoice", "?operation=chat:default", "?operation=triage&state=failed",
		"?operation=zzz&state=succeeded", "?operation=traige&created_after=2000-01-01T00:00:00Z"} {
		if p := b.list(t, acmeKey, q); len(p.Data) != 0 || p.NextCursor != nil {
			t.Errorf("%s: %+v, want an empty last page", q, p)
		}
	}
}

// An operation this router does not run may still be that of the caller's
// jobs: a prompt retired since they ran (or loaded by another replica), chat
// completions of a route served elsewhere. Those list as before, also when
// the first page examined none of them and continues with a next_cursor.
func TestListUnknownOperationOfExistingJobsStillLists(t *testing.T) {
	b := setup(t, options{})
	api.SetListScan(t, 2)
	_, err := b.db.Pool.Exec(context.Background(), `
		INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state, created_at)
		SELECT gen_random_uuid(), 'acme', op, 'k' || i, '\x00', '1', 'default', '{}', 'failed', now() - i * interval '1 second'
		FROM (VALUES (1, 'triage'), (2, 'triage'), (3, 'triage'), (4, 'chat:elsewhere'), (5, 'summarize')) AS v(i, op)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"summarize", "chat:elsewhere"} {
		var seen int
		page := b.list(t, acmeKey, "?operation="+url.QueryEscape(op))
		if len(page.Data) != 0 || page.NextCursor == nil {
			t.Fatalf("operation=%s: first page %+v, want an empty page with a next_cursor (2 of 5 jobs examined)", op, page)
		}
		for n := 0; ; n++ {
			if n == 10 {
				t.Fatalf("operation=%s: no end after 10 pages", op)
			}
			seen += len(page.Data)
			if page.NextCursor == nil {
				break
			}
			page = b.list(t, acmeKey, "?operation="+url.QueryEscape(op)+"&cursor="+url.QueryEscape(*page.NextCursor))
		}
		if seen != 1 {
			t.Errorf("operation=%s: %d jobs, want 1", op, seen)
		}
	}
	// Read to its end, the listing has no job of an operation nobody runs:
	// with no bound on the examination, that is known at the first page.
	api.SetListScan(t, 0)
	if p := b.list(t, acmeKey, "?operation=summarize"); len(p.Data) != 1 {
		t.Errorf("operation=summarize, unbounded: %d jobs, want 1", len(p.Data))
	}
	wantListRejectedAs(t, b, "?operation=sumarize", "Unknown operation", `"sumarize"`)
}

// A state that is no job state is a 400 naming the value, the states and the
// one it was likely meant to be.
func TestListUnknownStateNamesValue(t *testing.T) {
	b := setup(t, options{})
	const states = "state must be one of pending, running, succeeded, failed, cancelled, unknown"
	wantListRejectedAs(t, b, "?state=succeded", "Unknown state", `state "succeded" is not a job state`,
		"did you mean succeeded?", states)
	wantListRejectedAs(t, b, "?state=FAILED", "Unknown state", `"FAILED"`, "did you mean failed?", states)
	wantListRejectedAs(t, b, "?state=done", "Unknown state", `"done"`, states)
	if r := b.do(t, "GET", "/v1/jobs?state=done", acmeKey, ""); strings.Contains(string(r.raw), "did you mean") {
		t.Errorf("state=done: %s, want no guess", r.raw)
	}
}

// An unknown parameter's rejection says which parameter it was likely meant
// to be, and malformed values are quoted back.
func TestListRejectionsSuggestAndQuote(t *testing.T) {
	b := setup(t, options{})
	wantListRejectedAs(t, b, "?stat=failed", "Unknown query parameter", `For "stat", did you mean state?`)
	wantListRejected(t, b, "?status=failed", `For "status", did you mean state?`)
	wantListRejected(t, b, "?Limit=5&operaton=triage", `For "Limit", did you mean limit?`, `For "operaton", did you mean operation?`)
	wantListRejected(t, b, "?next_cursor=abc", `For "next_cursor", did you mean cursor?`)
	if r := b.do(t, "GET", "/v1/jobs?page=2", acmeKey, ""); strings.Contains(string(r.raw), "did you mean") {
		t.Errorf("page=2: %s, want no guess", r.raw)
	}
	wantListRejected(t, b, "?limit=abc", `limit must be a whole number from 1 to 200, not "abc"`)
	wantListRejected(t, b, "?limit=0", `not "0"`)
	wantListRejected(t, b, "?created_after=yesterday",
		`created_after must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not "yesterday"`)
}

// An operation this replica does not run, of which the caller has jobs, with
// a filter that matches none of them now (a state, a poller's time window):
// an empty page, not "Unknown operation" — the page says nothing of whether
// the caller has jobs of that operation (rdiff47).
func TestUnknownOperationWithOtherFiltersStillLists(t *testing.T) {
	b := setup(t, options{})
	_, err := b.db.Pool.Exec(context.Background(), `
		INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state, created_at)
		VALUES (gen_random_uuid(), 'acme', 'summarize', 'k1', '\x00', '1', 'default', '{}', 'failed', now() - interval '1 hour')`)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().Add(-30 * time.Second).UTC().Format(time.RFC3339)
	for _, q := range []string{"?operation=summarize&state=running", "?operation=summarize&created_after=" + after} {
		if r := b.do(t, "GET", "/v1/jobs"+q, acmeKey, ""); r.status != http.StatusOK {
			t.Errorf("GET /v1/jobs%s: %d %s, want 200 with an empty page (the caller has summarize jobs)", q, r.status, r.raw)
		}
	}
}
