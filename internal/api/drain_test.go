package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// SPEC §17: Drain answers callers waiting for a job at once with the job as it
// stands — POST /v1/jobs 202 with Location, a chat completion 504
// still_running with Retry-After — while the attempt is still in flight.
func TestDrainAnswersWaitingCallers(t *testing.T) {
	arrived, release := make(chan struct{}, 2), make(chan struct{})
	defer close(release)
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		arrived <- struct{}{}
		<-release
		return providers.Step{Output: validTriage}
	}})
	jobs, chats := make(chan reply, 1), make(chan reply, 1)
	go func() { jobs <- b.create(t, acmeKey, "drain-1", triageBody("Login"), "Prefer", "wait=60") }()
	go func() {
		chats <- b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
			"Idempotency-Key", "drain-chat")
	}()
	<-arrived
	<-arrived // both attempts are in flight and both callers wait
	b.api.Drain()
	r := <-jobs
	if r.status != http.StatusAccepted || r.header.Get("Location") != "/v1/jobs/"+r.job() || r.body["state"] == "succeeded" {
		t.Fatalf("job caller: %d %v %s", r.status, r.header, r.raw)
	}
	c := <-chats
	if c.status != http.StatusGatewayTimeout || c.header.Get("Retry-After") == "" || c.header.Get("X-Router-Job-Id") == "" ||
		!strings.Contains(string(c.raw), `"code":"still_running"`) || !strings.Contains(string(c.raw), "shutting down") {
		t.Fatalf("chat caller: %d %v %s", c.status, c.header, c.raw)
	}
	// A wait that starts after the drain does not wait either.
	if r := b.do(t, "GET", "/v1/jobs/"+r.job(), acmeKey, "", "Prefer", "wait=60"); r.status != http.StatusOK || r.body["state"] == "succeeded" {
		t.Fatalf("GET after drain: %d %s", r.status, r.raw)
	}
}
