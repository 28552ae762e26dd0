package race

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/store"
)

// Eligible says when a job's route is not configured on this replica
// (ErrRouteNotConfigured, naming the route), for a chat job (whose route is
// its model) as for a prompt job: the API's retry refuses it before anything
// is written. It used to answer ok ("as Plan: the runner reports it"), so the
// retry of a job whose route a configuration change renamed or removed was
// let through, took its key, and was handed over by its run (rjobs13).
func TestEligibleRouteNotConfigured(t *testing.T) {
	r := &Runner{cfg: Config{
		Targets: map[string]*Target{"p": {Model: "gpt-4o", ContextWindow: 100000}},
		Routes:  map[string]*Route{"r": {Providers: []string{"p"}}},
	}}
	in := json.RawMessage(`{"messages":[{"role":"user","content":"hi"}]}`)
	for _, job := range []*store.Job{
		{Owner: "acme", Operation: chat.Operation("gone"), Route: "gone", Input: in},
		{Owner: "acme", Operation: "triage", PromptVersion: "3", Route: "gone", Input: json.RawMessage(`{}`)},
	} {
		routing, ok, err := r.Eligible(job)
		if ok || routing != nil || !errors.Is(err, ErrRouteNotConfigured) || !strings.Contains(err.Error(), `"gone"`) {
			t.Fatalf("%s on unconfigured route gone: ok %v, routing %s, err %v; want ErrRouteNotConfigured naming the route", job.Operation, ok, routing, err)
		}
	}
	if routing, ok, err := r.Eligible(&store.Job{Owner: "acme", Operation: chat.Operation("r"), Route: "r", Input: in}); err != nil || !ok {
		t.Fatalf("chat job on configured route r: ok %v (%v), routing %s; want eligible", ok, err, routing)
	}
}
