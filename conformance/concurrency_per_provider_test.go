package conformance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// docs/conformance.md (`router conformance run`): "Providers run
// concurrently, at most --concurrency (default 4) at once; the cases of one
// provider, its aliases' runs included, run one after another." A provider
// with no model of its own serves several route targets (oai/model-a,
// oai/model-b), one adapter and one endpoint (server.BuildTargets shares the
// adapter per provider): the runner plans per target id, so both targets'
// cases are sent to the one provider at the same time — twice the load the
// docs promise on its rate limit, where a 429 makes the results
// inconclusive. Found by review (rconf14).
func TestCasesOfOneProviderRunOneAfterAnother(t *testing.T) {
	prompts, suites := loadPrompts(t), loadSuites(t)
	a := suiteAnswers(t, prompts, suites)
	var mu sync.Mutex
	inFlight, most := 0, 0
	oai := providers.NewScripted(providers.ScriptedConfig{Name: "oai", Model: "model-a", Respond: func(_ int, req *providers.Request) providers.Step {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return oracle(a, nil)(0, req)
	}})
	targets := map[string]*race.Target{
		"oai/model-a": {Provider: oai, Model: "model-a", ContextWindow: 128000, Timeout: time.Minute},
		"oai/model-b": {Provider: oai, Model: "model-b", ContextWindow: 128000, Timeout: time.Minute},
	}
	rep, err := conformance.Run(context.Background(), conformance.Options{Targets: targets, Prompts: prompts, Suites: suites,
		PromptNames: []string{"triage"}, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("results %+v, want one per target", rep.Results)
	}
	if most > 1 {
		t.Fatalf("provider oai had %d calls in flight at once from one run (its two route targets ran concurrently); docs: the cases of one provider run one after another", most)
	}
}
