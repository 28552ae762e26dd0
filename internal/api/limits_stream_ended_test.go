package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
)

// A streamed chat completion, too, is off its owner's max_live_jobs count
// once it has finished, as the plain one is: a caller streaming completions
// one after another under a limit of 1 is not refused on the count of the
// one it was just answered (the count is read once here: the refresh is an
// hour).
func TestLiveLimitStreamedAnsweredIsNotCounted(t *testing.T) {
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}},
		liveRefresh: time.Hour,
	})
	for _, k := range []string{"stream-1", "stream-2", "stream-3"} {
		r := b.do(t, "POST", "/v1/chat/completions", acmeKey,
			`{"model":"default","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "Idempotency-Key", k)
		if r.status != http.StatusOK || !strings.Contains(string(r.raw), "data: [DONE]") {
			t.Fatalf("streamed completion %s, the ones before it answered: %d %s", k, r.status, r.raw)
		}
	}
}
