package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// ownerSpy is the runner, noting the owner of every job it is asked to plan
// or to judge eligible.
type ownerSpy struct {
	*race.Runner
	mu     sync.Mutex
	owners []string
}

func (s *ownerSpy) note(job *store.Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.owners = append(s.owners, job.Owner)
}

func (s *ownerSpy) Plan(job *store.Job) (store.JobPlan, json.RawMessage, bool, error) {
	s.note(job)
	return s.Runner.Plan(job)
}

func (s *ownerSpy) Eligible(job *store.Job) (json.RawMessage, bool, error) {
	s.note(job)
	return s.Runner.Eligible(job)
}

// The API planned a new job (POST /v1/jobs, /v1/chat/completions) and
// checked a retry's eligibility with a store.Job that had no Owner: the
// token counts routing made of every tenant's request were cached for the
// empty owner, which all tenants shared (docs/prompts.md §4: one owner's
// counts never answer another's). Found by review. Each is asked with the
// caller's owner.
func TestPlanningCarriesTheJobsOwner(t *testing.T) {
	spy := &ownerSpy{}
	b := setup(t, options{respond: refused, exec: func(e api.Executor) api.Executor { spy.Runner = e.(*race.Runner); return spy }})
	id := failedJob(t, b, "plan-owner") // planned: POST /v1/jobs
	if r := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/retry", acmeKey, ""); r.status != http.StatusOK {
		t.Fatalf("retry: %d %s", r.status, r.raw)
	}
	b.do(t, http.MethodPost, "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	spy.mu.Lock()
	owners := slices.Clone(spy.owners)
	spy.mu.Unlock()
	if len(owners) < 3 || slices.ContainsFunc(owners, func(o string) bool { return o != "acme" }) {
		t.Errorf("the jobs of acme's job, retry and chat were planned or judged for the owners %q; want acme for each", owners)
	}
}
