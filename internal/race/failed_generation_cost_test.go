package race_test

import (
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A model's failed generation that the provider answers with an error status
// (Groq's 400 tool_use_failed: the model ran and the provider billed it) is
// failed over as the provider's malformed answer; its attempt carries the
// estimated prompt, as a cut answer's does, not nothing as a refusal's.
func TestFailedGenerationWithAnErrorStatusIsEstimatedAsBilled(t *testing.T) {
	price := &providers.Price{InputPerMTok: 3, OutputPerMTok: 15}
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "primary", Price: price, Respond: func(int, *providers.Request) providers.Step {
			e := providers.NewError("primary", providers.KindMalformedResponse, "Failed to call a function. Please adjust your prompt.")
			e.StatusCode, e.Code, e.Received = 400, "tool_use_failed", true
			return providers.Step{Error: e}
		}},
		{Name: "fallback", Price: price, Respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Output: racetest.ValidTriage}
		}},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	b.Stop()
	p := racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || p == nil || p.State != store.AttemptFailed {
		t.Fatalf("job %s, attempts %+v: want the primary failed and the fallback's win", j.State, j.Attempts)
	}
	var u struct {
		PromptTokens int  `json:"prompt_tokens"`
		Estimated    bool `json:"estimated"`
	}
	if len(p.Usage) == 0 || json.Unmarshal(p.Usage, &u) != nil || u.PromptTokens <= 0 || !u.Estimated || p.CostUSD == nil || *p.CostUSD <= 0 {
		t.Fatalf("failed generation's attempt has usage %s and cost %v: want its prompt estimated as billed (error %s)", p.Usage, p.CostUSD, p.Error)
	}
}
