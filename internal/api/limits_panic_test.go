package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// panickyPlan is an executor whose Plan panics while armed.
type panickyPlan struct {
	api.Executor
	armed *atomic.Bool
}

func (e panickyPlan) Plan(job *store.Job) (store.JobPlan, json.RawMessage, bool, error) {
	if e.armed.Load() {
		panic("injected by the test")
	}
	return e.Executor.Plan(job)
}

// A request that panics after its max_live_jobs admission (answered 500 by
// ServeHTTP) gives the admission back: the owner's next job is not refused
// for a creation that ended long ago — on POST /v1/jobs, on chat, and on a
// retry.
func TestPanicAfterLiveAdmissionFreesTheSlot(t *testing.T) {
	var armed atomic.Bool
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}},
		liveRefresh: time.Nanosecond, // every admission reads the database's count
		logs:        io.Discard,      // the panics' stacks
		exec:        func(e api.Executor) api.Executor { return panickyPlan{e, &armed} },
		respond: func(_ int, req *providers.Request) providers.Step {
			for _, m := range req.Messages {
				if strings.Contains(m.Content, "Refused") {
					return providers.Step{Status: http.StatusBadRequest}
				}
			}
			return providers.Step{Output: validTriage}
		},
	})
	panicking := func(what, method, path, body string, hdr ...string) {
		t.Helper()
		armed.Store(true)
		defer armed.Store(false)
		if r := b.do(t, method, path, acmeKey, body, hdr...); r.status != http.StatusInternalServerError {
			t.Fatalf("%s whose plan panics: %d %s, want 500", what, r.status, r.raw)
		}
	}
	next := func(what, key string) {
		t.Helper()
		r := b.create(t, acmeKey, key, triageBody("Good"), "Prefer", "wait=30")
		if r.status != http.StatusCreated || r.body["state"] != "succeeded" {
			t.Fatalf("a job after %s that panicked, with no live job: %d %s", what, r.status, r.raw)
		}
	}

	panicking("a job", "POST", "/v1/jobs", triageBody("Good"), "Idempotency-Key", "panic-job")
	next("a job", "after-job")

	panicking("a chat call", "POST", "/v1/chat/completions", `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		"Idempotency-Key", "panic-chat")
	next("a chat call", "after-chat")

	failed := b.create(t, acmeKey, "to-retry", triageBody("Refused"), "Prefer", "wait=30")
	if failed.body["state"] != "failed" {
		t.Fatalf("job to retry: %d %s", failed.status, failed.raw)
	}
	panicking("a retry", "POST", "/v1/jobs/"+failed.job()+"/retry", "")
	next("a retry", "after-retry")
}
