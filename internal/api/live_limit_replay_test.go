package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// expireOnPlan is the runner as the API's executor, which, when armed with a
// key, ends that key's retention in the database while the request is being
// planned: after admitLive has found the key held, before CreateJob claims it.
type expireOnPlan struct {
	api.Executor
	pool  *pgxpool.Pool
	key   atomic.Pointer[string]
	fired atomic.Bool
}

func (e *expireOnPlan) Plan(job *store.Job) (store.JobPlan, json.RawMessage, bool, error) {
	if k := e.key.Swap(nil); k != nil {
		tag, err := e.pool.Exec(context.Background(),
			`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE idempotency_key = $1`, *k)
		e.fired.Store(err == nil && tag.RowsAffected() == 1)
	}
	return e.Executor.Plan(job)
}

// max_live_jobs lets a replay of a held key past the limit; if the key's
// retention ends between that look-up and the claim, the request is no
// replay any more and must not create a job: it is refused as the limit
// refuses (429, Retry-After, "limit": "max_live_jobs"), nothing stored. It
// created a second live job for an owner whose limit is 1 (found by review:
// resends of a key just as its retention ended). A genuine replay at the limit
// is still answered with its job.
func TestMaxLiveJobsReplayWhoseKeyExpiresBeforeItsClaim(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var calls atomic.Int32
	hook := &expireOnPlan{}
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}},
		liveRefresh: time.Nanosecond, // every admission reads the count: the ended job is not counted
		retention:   time.Hour,
		respond: func(int, *providers.Request) providers.Step {
			if calls.Add(1) > 1 {
				<-release // every job after the first stays running
			}
			return providers.Step{Output: validTriage}
		},
		exec: func(e api.Executor) api.Executor { hook.Executor = e; return hook },
	})
	hook.pool = b.db.Pool

	first := triageBody("Replayed")
	if r := b.create(t, acmeKey, "replayed", first, "Prefer", "wait=30"); r.status != http.StatusCreated {
		t.Fatalf("first job: %d %s", r.status, r.raw)
	}
	if r := b.create(t, acmeKey, "blocker", triageBody("Blocker")); r.status != http.StatusAccepted {
		t.Fatalf("second job: %d %s", r.status, r.raw)
	}
	// At the limit: a new key is refused, a held one replayed.
	if r := b.create(t, acmeKey, "new", triageBody("New")); r.status != http.StatusTooManyRequests {
		t.Fatalf("a new job at the limit: %d %s", r.status, r.raw)
	}
	if r := b.create(t, acmeKey, "replayed", first); r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay of the ended job at the limit: %d %s", r.status, r.raw)
	}
	if r := b.create(t, acmeKey, "blocker", triageBody("Blocker")); r.status != http.StatusAccepted || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay of the live job at the limit: %d %s", r.status, r.raw)
	}

	// The key is held when admitLive looks, expired when CreateJob claims.
	key := "replayed"
	hook.key.Store(&key)
	r := b.create(t, acmeKey, "replayed", first)
	if !hook.fired.Load() {
		t.Fatal("the key's retention was not ended between admission and claim")
	}
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || r.body["limit"] != "max_live_jobs" ||
		!strings.Contains(r.body["detail"].(string), "max_live_jobs is 1") {
		t.Fatalf("replay whose key expired before its claim: %d %v %s; want the max_live_jobs 429", r.status, r.header, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE owner = 'acme' AND state IN ('pending', 'running', 'unknown')`); n != 1 {
		t.Fatalf("acme has %d live jobs; its max_live_jobs is 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE idempotency_key = 'replayed'`); n != 1 {
		t.Fatalf("%d jobs for the key; want 1, nothing stored by the refusal", n)
	}
}

// The chat endpoint's replay past max_live_jobs is held to the same rule: a
// key that expires between the look-up and the claim gets the limit's 429
// (OpenAI's shape, code max_live_jobs_exceeded), and nothing is stored.
func TestMaxLiveJobsChatReplayWhoseKeyExpiresBeforeItsClaim(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var calls atomic.Int32
	hook := &expireOnPlan{}
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}},
		liveRefresh: time.Nanosecond,
		retention:   time.Hour,
		respond: func(int, *providers.Request) providers.Step {
			if calls.Add(1) > 1 {
				<-release
			}
			return providers.Step{Output: validTriage}
		},
		exec: func(e api.Executor) api.Executor { hook.Executor = e; return hook },
	})
	hook.pool = b.db.Pool

	body := `{"model":"default","messages":[{"role":"user","content":"Replayed"}]}`
	if r := b.do(t, "POST", "/v1/chat/completions", acmeKey, body, "Idempotency-Key", "chat-replayed"); r.status != http.StatusOK {
		t.Fatalf("first chat call: %d %s", r.status, r.raw)
	}
	if r := b.create(t, acmeKey, "blocker", triageBody("Blocker")); r.status != http.StatusAccepted {
		t.Fatalf("blocking job: %d %s", r.status, r.raw)
	}
	key := "chat-replayed"
	hook.key.Store(&key)
	r := b.do(t, "POST", "/v1/chat/completions", acmeKey, body, "Idempotency-Key", "chat-replayed")
	if !hook.fired.Load() {
		t.Fatal("the key's retention was not ended between admission and claim")
	}
	if r.status != http.StatusTooManyRequests || !strings.Contains(string(r.raw), `"code":"max_live_jobs_exceeded"`) {
		t.Fatalf("chat replay whose key expired before its claim: %d %s; want the max_live_jobs 429", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE idempotency_key = 'chat-replayed'`); n != 1 {
		t.Fatalf("%d jobs for the key; want 1, nothing stored by the refusal", n)
	}
}
