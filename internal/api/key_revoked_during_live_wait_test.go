package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
)

// failFirstPlan holds the next Plan, once armed, until release is closed,
// having closed entered, and then fails it as an input the prompt cannot be
// rendered from: that request's admission (max_live_jobs) is in flight while
// it is held, and it creates nothing.
type failFirstPlan struct {
	api.Executor
	mu               sync.Mutex
	entered, release chan struct{}
}

func (e *failFirstPlan) arm() (entered, release chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entered, e.release = make(chan struct{}), make(chan struct{})
	return e.entered, e.release
}

func (e *failFirstPlan) Plan(job *store.Job) (store.JobPlan, json.RawMessage, bool, error) {
	e.mu.Lock()
	entered, release := e.entered, e.release
	e.entered, e.release = nil, nil
	e.mu.Unlock()
	if entered != nil {
		close(entered)
		<-release
		return nil, nil, false, errors.New("held by the test, then failed: this request creates nothing")
	}
	return e.Executor.Plan(job)
}

// SPEC §16: a request whose API key is revoked while it waits, under
// max_live_jobs, for the request with the same Idempotency-Key (maxKeyWait)
// creates nothing: its key is checked again once the wait has ended. Before,
// the key was checked only before and once the body had arrived, and when the
// first request created nothing the waiting one was admitted and created its
// job after the revocation. The chat endpoint answers in OpenAI's shape.
func TestKeyRevokedWhileWaitingForSameKeyCreatesNothing(t *testing.T) {
	gate := &failFirstPlan{}
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme-wait-jobs": {MaxLiveJobs: 1}, "acme-wait-chat": {MaxLiveJobs: 1}},
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
	ctx := context.Background()
	cases := []struct {
		name, path, owner, body string
		refused                 func(answer map[string]any) bool
	}{
		{"job", "/v1/jobs", "acme-wait-jobs", triageBody("Revoked while waiting"), func(a map[string]any) bool {
			d, _ := a["detail"].(string)
			typ, _ := a["type"].(string)
			return strings.HasSuffix(typ, "unauthenticated") &&
				a["title"] == "API key revoked" && strings.Contains(d, "same Idempotency-Key (max_live_jobs)")
		}},
		{"chat completion", "/v1/chat/completions", "acme-wait-chat",
			`{"model":"default","messages":[{"role":"user","content":"Revoked while waiting"}]}`, func(a map[string]any) bool {
				e, _ := a["error"].(map[string]any)
				m, _ := e["message"].(string)
				return e["code"] == "invalid_api_key" && strings.Contains(m, "same Idempotency-Key (max_live_jobs)")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, err := b.db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: tc.owner})
			if err != nil {
				t.Fatal(err)
			}
			post := func() <-chan reply {
				out := make(chan reply, 1)
				go func() {
					r, err := send(b.srv.URL+tc.path, "POST", k.Key, tc.body, "Idempotency-Key", "wait-revoked")
					if err != nil {
						r.status, r.raw = -1, []byte(err.Error())
					}
					out <- r
				}()
				return out
			}
			entered, release := gate.arm()
			first := post()
			<-entered // the first request's admission holds the owner's only slot
			second := post()
			select {
			case <-waiting: // the second waits for the first's admission under its key
			case r := <-second:
				close(release)
				<-first
				t.Fatalf("the second request was answered while the first was being created: %d %s", r.status, r.raw)
			}
			if err := b.db.Store.RevokeAPIKey(ctx, k.ID); err != nil {
				t.Fatal(err)
			}
			if r := b.do(t, "GET", "/v1/models", k.Key, ""); r.status != http.StatusUnauthorized {
				t.Fatalf("a new request after the revocation: %d, want 401", r.status)
			}
			close(release)
			if f := <-first; f.status < 400 {
				t.Fatalf("first: %d %s; want its planning failed", f.status, f.raw)
			}
			s := <-second
			n := b.count(t, `SELECT count(*) FROM jobs WHERE owner = $1`, tc.owner)
			if s.status != http.StatusUnauthorized || !tc.refused(s.body) || n != 0 {
				t.Fatalf("answered %d %s and %d job(s) created after the revocation; want 401 saying the key was revoked, and none", s.status, s.raw, n)
			}
		})
	}
}
