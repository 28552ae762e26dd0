package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/tokens"
)

// docs/prompts.md §4: the token-count cache "is per owner (tenant): the key
// holds a seeded hash of the job's owner, and one owner's counts never answer
// another's". The API planned every new job (Exec.Plan) with a store.Job that
// had no Owner, so the routing count of every tenant's request was cached
// under the empty owner, shared by all tenants: the timing oracle the
// per-owner cache was built to close was open again on the routing path.
// Found by review.
func TestRoutingCountIsCachedForTheRequestsOwner(t *testing.T) {
	// A window small enough that the request's bytes do not prove it fits,
	// so routing counts it (byteBound), large enough that it fits and runs.
	b := setup(t, options{window: 1500})
	text := fmt.Sprintf("secret %d: ", time.Now().UnixNano()) + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	body := `{"model":"default","messages":[{"role":"user","content":"` + text + `"}]}`
	r := b.do(t, http.MethodPost, "/v1/chat/completions", acmeKey, body, "Idempotency-Key", "owner-cache")
	if r.status >= 500 || r.status == http.StatusBadRequest {
		t.Fatalf("chat: %d %s", r.status, r.raw)
	}
	encs := []string{tokens.O200kBase, tokens.Cl100kBase}
	var forAcme, forNobody bool
	for _, enc := range encs {
		forAcme = forAcme || tokens.Cached("acme", enc, text)
		forNobody = forNobody || tokens.Cached("", enc, text)
	}
	if forNobody {
		t.Errorf("acme's message count is cached under the empty owner, which every tenant's request shares")
	}
	if !forAcme {
		t.Errorf("acme's message count is not cached for acme")
	}
}
