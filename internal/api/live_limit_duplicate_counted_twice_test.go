package api_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// max_live_jobs counts, on one replica, the jobs read from the database plus
// this replica's admissions since, done or in flight. Two requests with the
// same Idempotency-Key (an SDK's resend of a slow request, a client's
// duplicate) are two admissions but can make only one job: the first to
// claim the key creates it, the other is its replay. While the slower of the
// two is still in flight, the owner's count holds the intent twice, and a
// third request with a different key is refused 429 too-many-live-jobs
// although the owner has one live job of its two: refused below its limit on
// a guess (docs/operations.md: "the owner is never refused below its limit on
// a guess"; a replay is never refused, but here a new intent is, because of
// a replay). ridem13's suspicion 2, proven.
func TestLiveLimitDuplicateInFlightNotCountedTwice(t *testing.T) {
	gate := &planGate{entered: make(chan struct{}), release: make(chan struct{})}
	hang := make(chan struct{})
	defer close(hang)
	var calls atomic.Int32
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 2}}, // liveRefresh 0: the default 1 s
		respond: func(int, *providers.Request) providers.Step {
			calls.Add(1)
			<-hang // every job stays running: it counts against the limit
			return providers.Step{Output: validTriage}
		},
		exec: func(e api.Executor) api.Executor { gate.Executor = e; return gate },
	})
	body := triageBody("Same intent")
	post := func(key, body string) <-chan reply {
		out := make(chan reply, 1)
		go func() {
			r, err := send(b.srv.URL+"/v1/jobs", "POST", acmeKey, body, "Idempotency-Key", key)
			if err != nil {
				r.status, r.raw = -1, []byte(err.Error())
			}
			out <- r
		}()
		return out
	}
	// The first request is admitted and held in its plan (a slow plan: a
	// large prompt's token count, a database under load).
	first := post("dup", body)
	<-gate.entered
	// Its duplicate (same key, same body) is admitted beside it and claims
	// the key first: it creates the job.
	dup := <-post("dup", body)
	if dup.status != http.StatusAccepted {
		close(gate.release)
		t.Fatalf("duplicate: %d %s", dup.status, dup.raw)
	}
	if n := b.live(t); n != 1 {
		close(gate.release)
		t.Fatalf("acme has %d live jobs after the duplicate, want 1", n)
	}
	// A new intent, while the first request (whose job is the duplicate's)
	// is still in flight: acme has 1 live job, its limit is 2.
	other := <-post("other", triageBody("Another intent"))
	live := b.live(t)
	close(gate.release)
	f := <-first
	if f.status != http.StatusAccepted || f.job() != dup.job() || f.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("first request: %d %s; want the duplicate's job %s, replayed", f.status, f.raw, dup.job())
	}
	if other.status == http.StatusTooManyRequests {
		t.Fatalf("a new job for acme (1 live job when refused, %d after; max_live_jobs 2) was refused 429, "+
			"its one in-flight replay counted as a second creation:\n%s", live, other.raw)
	}
	if other.status != http.StatusAccepted {
		t.Fatalf("new job: %d %s", other.status, other.raw)
	}
}

func (b *bundle) live(t *testing.T) int {
	t.Helper()
	return b.count(t, `SELECT count(*) FROM jobs WHERE owner = 'acme' AND state IN ('pending', 'running', 'unknown')`)
}
