package api_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

type unplannable struct{ *race.Runner }

func (f unplannable) Plan(job *store.Job) (store.JobPlan, json.RawMessage, bool, error) {
	if strings.Contains(string(job.Input), "Bad") {
		return nil, nil, false, errors.New("the prompt cannot be rendered: boom")
	}
	return f.Runner.Plan(job)
}

// A request refused because its job cannot be planned (its prompt does not
// render) gives back its max_live_jobs admission: the owner's next request is
// not refused for a job that never existed.
func TestUnplannableRequestFreesItsLiveSlot(t *testing.T) {
	b := setup(t, options{})
	srv := httptest.NewServer(api.New(api.Config{LeaseOwner: "test", Lease: 30 * time.Second, LiveRefresh: time.Millisecond,
		OwnerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}}}, api.Deps{
		Store: b.db.Store, Listener: b.listener, Prompts: b.prompts, Routes: map[string]bool{"default": true},
		Exec: unplannableExec{b.runner}, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}},
	}))
	defer srv.Close()
	post := func(key, subject string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/jobs", strings.NewReader(triageBody(subject)))
		req.Header.Set("Authorization", "Bearer "+acmeKey)
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if st, body := post("bad-1", "Bad"); st != http.StatusUnprocessableEntity {
		t.Fatalf("unplannable request: %d %s, want 422", st, body)
	}
	if st, body := post("good-1", "Good"); st == http.StatusTooManyRequests {
		t.Fatalf("owner with no live job refused after one unplannable request: %d %s", st, body)
	}
}

type unplannableExec struct{ *race.Runner }

func (e unplannableExec) Plan(job *store.Job) (store.JobPlan, json.RawMessage, bool, error) {
	return unplannable{e.Runner}.Plan(job)
}
