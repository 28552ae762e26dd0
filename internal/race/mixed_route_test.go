package race_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A route may mix kinds (SPEC §18): an OpenAI-compatible primary that keeps
// answering 503 is retried, then the job fails over to an Anthropic target,
// whose answer wins.
func TestMixedRouteFailsOverToAnthropic(t *testing.T) {
	var openaiCalls atomic.Int64
	oai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		openaiCalls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"message":"The engine is currently overloaded, please try again later.","type":"server_error","param":null,"code":null}}`))
	}))
	t.Cleanup(oai.Close)
	primary, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "openai", BaseURL: oai.URL + "/v1", APIKey: "sk-test", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	claude := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
		return anthropicfake.Reply{Text: racetest.ValidTriage, Model: "claude-test-1", InputTokens: 40, OutputTokens: 20}
	})
	fallback, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "anthropic", BaseURL: claude.URL, APIKey: "sk-ant", Model: "claude-test", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "openai", Adapter: primary, MaxRetries: 1},
		{Name: "anthropic", Adapter: fallback},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s, attempts %+v", j.State, j.Attempts)
	}
	if n := openaiCalls.Load(); n != 2 {
		t.Fatalf("OpenAI-compatible primary called %d times, want 2 (one retry)", n)
	}
	won := racetest.AttemptOn(j, "anthropic")
	if won == nil || won.State != store.AttemptWon || won.Role != store.RoleFailover {
		t.Fatalf("anthropic attempt %+v", won)
	}
	if won.ResponseModel == nil || *won.ResponseModel != "claude-test-1" {
		t.Fatalf("response model %v", won.ResponseModel)
	}
	var u providers.Usage
	if err := json.Unmarshal(won.Usage, &u); err != nil || u.PromptTokens != 40 || u.CompletionTokens != 20 {
		t.Fatalf("usage %s: %v", won.Usage, err)
	}
	for _, a := range j.Attempts {
		if a.Provider == "openai" && a.State != store.AttemptFailed {
			t.Fatalf("openai attempt %+v", a)
		}
	}
	// The fallback got the rendered prompt as a Messages API request.
	reqs := claude.Requests()
	if len(reqs) != 1 || reqs[0].Body["stream"] != true || len(reqs[0].Body["messages"].([]any)) == 0 {
		t.Fatalf("anthropic requests %+v", reqs)
	}
	var out map[string]any
	if err := json.Unmarshal(j.Result, &out); err != nil || out["category"] != "technical" {
		t.Fatalf("result %s: %v", j.Result, err)
	}
}
