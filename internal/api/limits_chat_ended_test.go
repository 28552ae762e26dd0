package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
)

// A chat completion answered whole is off its owner's max_live_jobs count
// before the answer: a caller sending completions one after another under a
// limit of 1 is not refused on the count of the one it was just answered
// (the count is read once here: the refresh is an hour).
func TestLiveLimitChatAnsweredIsNotCounted(t *testing.T) {
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}},
		liveRefresh: time.Hour,
	})
	for _, k := range []string{"chat-1", "chat-2", "chat-3"} {
		r := b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
			"Idempotency-Key", k)
		if r.status != http.StatusOK {
			t.Fatalf("completion %s, the ones before it answered: %d %s", k, r.status, r.raw)
		}
	}
}
