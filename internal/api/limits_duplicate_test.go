package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// planGate holds the first job's Plan until release is closed, having closed
// entered: that request's admission (max_live_jobs) is then in flight.
type planGate struct {
	api.Executor
	once             sync.Once
	entered, release chan struct{}
}

func (e *planGate) Plan(job *store.Job) (store.JobPlan, json.RawMessage, bool, error) {
	first := false
	e.once.Do(func() { first = true })
	if first {
		close(e.entered)
		<-e.release
	}
	return e.Executor.Plan(job)
}

// SPEC §5 and §17: a duplicate sent while the request it duplicates is being
// created on this replica — its admission holding the owner's only live job
// slot — gets that request's job, not 429 too-many-live-jobs (a replay is
// never refused by max_live_jobs): it waits for that admission to end, then is
// the replay it now is. (Found by review: the key was not held yet, so the
// duplicate was refused, the detail saying the owner had a live job.)
func TestLiveLimitDuplicateInFlightGetsTheJob(t *testing.T) {
	gate := &planGate{entered: make(chan struct{}), release: make(chan struct{})}
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}},
		liveRefresh: time.Hour,
		exec:        func(e api.Executor) api.Executor { gate.Executor = e; return gate },
	})
	waiting := make(chan struct{}, 1)
	api.OnLiveKeyWait(b.api, func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	body := triageBody("Same intent")
	post := func() <-chan reply {
		out := make(chan reply, 1)
		go func() {
			r, err := send(b.srv.URL+"/v1/jobs", "POST", acmeKey, body, "Idempotency-Key", "dup", "Prefer", "wait=10")
			if err != nil {
				r.status, r.raw = -1, []byte(err.Error())
			}
			out <- r
		}()
		return out
	}
	first := post()
	<-gate.entered
	dup := post()
	select {
	case <-waiting: // the duplicate waits for the first's admission
	case r := <-dup:
		close(gate.release)
		<-first
		t.Fatalf("the duplicate was answered while the first request was being created: %d %s", r.status, r.raw)
	}
	close(gate.release)
	f, d := <-first, <-dup
	if f.status != http.StatusCreated {
		t.Fatalf("first: %d %s", f.status, f.raw)
	}
	if d.status >= 300 || d.job() != f.job() || d.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("duplicate: %d %s; want the first's job %s, replayed", d.status, d.raw, f.job())
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE owner = 'acme'`); n != 1 {
		t.Fatalf("%d jobs", n)
	}
}

// SPEC §17: max_live_jobs counts non-terminal jobs. An owner creating jobs
// one after another, each waited for (Prefer: wait), is not refused its next
// job on the count of the one it was just answered: this replica saw it end.
// And a refusal's detail tells the count it stands on, not that the owner
// has live jobs it may not have. (Found by review: with max_live_jobs 1 the
// second job was refused until the next read of the count, 1 s, the 429
// saying the owner already had a live job.)
func TestLiveLimitJobAnsweredEndedIsNotCounted(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}},
		liveRefresh: time.Hour, // read once: the count is this replica's own from then on
		respond: func(call int, req *providers.Request) providers.Step {
			for _, m := range req.Messages {
				if strings.Contains(m.Content, "Blocked") {
					<-release
				}
			}
			return providers.Step{Output: validTriage}
		},
	})
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	for _, k := range []string{"one", "two", "three"} {
		if r := b.create(t, acmeKey, k, triageBody(k), "Prefer", "wait=10"); r.status != http.StatusCreated {
			t.Fatalf("job %s, the jobs before it ended: %d %s", k, r.status, r.raw)
		}
	}
	if r := b.create(t, acmeKey, "blocked", triageBody("Blocked")); r.status != http.StatusAccepted {
		t.Fatalf("blocked job: %d %s", r.status, r.raw)
	}
	r := b.create(t, acmeKey, "refused", triageBody("Refused"))
	detail, _ := r.body["detail"].(string)
	if r.status != http.StatusTooManyRequests || !strings.Contains(detail, "max_live_jobs is 1") ||
		!strings.Contains(detail, "0 pending, running or unknown at its last read of the count") ||
		!strings.Contains(detail, "1 that it created since or is creating now") {
		t.Fatalf("with one live job: %d %s", r.status, r.raw)
	}
}
