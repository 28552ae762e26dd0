package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/store"
)

// A retry of a chat job whose own max_tokens fills every target's context
// window (a window made smaller since) is the 422 max-tokens-fill-window, and
// says the max_tokens is the request's, to send again smaller — not, as for
// a prompt job, that it is the prompt's definition for the router's operator
// to fix. Found by review.
func TestRetryOfChatJobWhoseMaxTokensFillsEveryWindowBlamesTheRequest(t *testing.T) {
	b := setup(t, options{window: 350})
	ctx := context.Background()
	op := chat.Operation("default")
	input := json.RawMessage(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":1000}`)
	fp, err := store.Fingerprint(op, "", "default", input)
	if err != nil {
		t.Fatal(err)
	}
	job, created, err := b.db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: op, IdempotencyKey: "retry-chat-max-tokens",
		Fingerprint: fp, Route: "default", Input: input})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	if state, err := b.db.Store.SettleJob(ctx, job.ID, "it failed before the window shrank"); err != nil || state != store.JobFailed {
		t.Fatalf("settle: %s, %v; want failed", state, err)
	}
	r := b.do(t, "POST", "/v1/jobs/"+job.ID+"/retry", acmeKey, "")
	detail, _ := r.body["detail"].(string)
	if r.status != http.StatusUnprocessableEntity || !strings.HasSuffix(fmt.Sprint(r.body["type"]), "/max-tokens-fill-window") {
		t.Fatalf("retry: %d %s; want 422 max-tokens-fill-window", r.status, r.raw)
	}
	if strings.Contains(detail, "operator") || !strings.Contains(detail, "smaller max_tokens") || !strings.Contains(detail, "still failed") {
		t.Fatalf("detail %q; want the request's max_tokens named as the caller's to lower, the job still failed — not the prompt's definition for the operator", detail)
	}
}
