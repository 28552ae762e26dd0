package conformance_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// A run tests the model of the target it names, not the provider's default
// model: one OpenAI-compatible provider whose own model is "big" serves the
// target p/mini, and every request of p/mini's run asks for "mini" (SPEC §15:
// conformance results are per target). Otherwise p/mini would be recorded as
// passing, and admitted to failover traffic, on answers from "big".
func TestRunAsksForTheTargetsModel(t *testing.T) {
	e := newEnv(t)
	fake := &fakeOpenAI{t: t, answers: e.answers}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	for _, stream := range []bool{false, true} {
		p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "p", BaseURL: srv.URL + "/v1", APIKey: "sk-test",
			Model: "big", Timeout: 30 * time.Second, StreamIdleTimeout: 10 * time.Second, Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		clear(e.targets)
		e.targets["p/mini"] = &race.Target{Provider: p, Model: "mini", ContextWindow: 128000, Timeout: 30 * time.Second, Stream: stream}
		before := len(fake.seen())
		rep := e.run(t, conformance.Options{PromptNames: []string{"triage"}})
		r := result(t, rep, "p/mini", "triage")
		if !r.Passed || r.Model != "mini" {
			t.Fatalf("stream=%v: p/mini passed=%v model %q, want a pass recorded for model mini", stream, r.Passed, r.Model)
		}
		reqs := fake.seen()[before:]
		if len(reqs) != len(e.suites["triage"].Cases) {
			t.Fatalf("stream=%v: %d requests, want one per case (%d)", stream, len(reqs), len(e.suites["triage"].Cases))
		}
		for i, req := range reqs {
			if req["model"] != "mini" {
				t.Fatalf("stream=%v: request %d asked for model %v, want the target's model \"mini\"", stream, i, req["model"])
			}
		}
		for _, c := range r.Cases {
			if !strings.HasPrefix(c.ResponseModel, "mini") {
				t.Fatalf("stream=%v: case %s answered by model %q, want mini", stream, c.Name, c.ResponseModel)
			}
		}
		var model string
		if err := e.db.Pool.QueryRow(context.Background(),
			`SELECT model FROM conformance_runs WHERE id = $1`, r.RunID).Scan(&model); err != nil || model != "mini" {
			t.Fatalf("stream=%v: stored run model %q (%v), want mini", stream, model, err)
		}
	}
}
