package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/race"
)

// A chat completion sent without an Idempotency-Key, whose wait the drain
// ends while every database connection is in use, was answered 503
// "could not reach its database" with Retry-After: an SDK resends that by
// itself, and without a key each resend is a new job. The job exists and
// runs: it is answered as still running, naming it and how to look it up.
// Found by review.
func TestDrainedUnkeyedChatWithPoolExhaustedNamesTheJob(t *testing.T) {
	submitted := make(chan struct{})
	var once sync.Once
	release := make(chan struct{})
	b := setup(t, options{respond: answerOn(release), exec: func(e api.Executor) api.Executor {
		return &submitSignal{Runner: e.(*race.Runner), done: func() { once.Do(func() { close(submitted) }) }}
	}})
	t.Cleanup(func() { close(release) })
	srv, returned := handlerReturns(t, b)
	got := make(chan reply, 1)
	go func() {
		got <- sendCtx(context.Background(), srv.URL+"/v1/chat/completions",
			"body", `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	}()
	awaitSignal(t, submitted, "the job to be created and submitted")
	holdPool(t, b.db.Pool)
	b.api.Drain()
	awaitSignal(t, returned, "the handler to return")
	r := <-got
	id := r.header.Get("X-Router-Job-Id")
	if r.status != http.StatusGatewayTimeout || id == "" || !strings.Contains(string(r.raw), "still_running") ||
		!strings.Contains(string(r.raw), "GET /v1/jobs/"+id) {
		t.Fatalf("%d Retry-After %q %s (job %q); want 504 still_running naming the job and its lookup",
			r.status, r.header.Get("Retry-After"), strings.TrimSpace(string(r.raw)), id)
	}
}
