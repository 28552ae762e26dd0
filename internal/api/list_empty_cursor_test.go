package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// An empty cursor is refused, not taken as no cursor: it would restart the
// listing, so a pager whose next cursor came out empty (jq -r
// '.next_cursor // empty' on the last page) would page from the first page
// again for ever. Found by review. (An empty filter or limit is still no
// filter or the default limit: TestListRejectsUnknownAndRepeatedParameters.)
func TestEmptyCursorIsRefused(t *testing.T) {
	b := setup(t, options{})
	if r := b.create(t, acmeKey, "empty-cursor", triageBody("one"), "Prefer", "wait=10"); r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	for _, q := range []string{"cursor=", "cursor", "state=succeeded&cursor=", "limit=1&cursor=&operation=triage"} {
		r := b.do(t, "GET", "/v1/jobs?"+q, acmeKey, "")
		d, _ := r.body["detail"].(string)
		if r.status != http.StatusBadRequest || r.body["title"] != "Empty cursor" || !strings.Contains(d, "cursor is empty") ||
			!strings.Contains(d, "restart the listing") {
			t.Errorf("GET /v1/jobs?%s: %d %s, want 400 naming the empty cursor", q, r.status, strings.TrimSpace(string(r.raw)))
		}
	}
	wantListRejected(t, b, "?stat=x&cursor=", `"stat"`, "cursor is empty")
	if r := b.do(t, "GET", "/v1/jobs?limit=1", acmeKey, ""); r.status != http.StatusOK {
		t.Errorf("no cursor: %d %s", r.status, r.raw)
	}
}
