package race_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A gateway (OpenRouter, LiteLLM) that has already sent 200 and keep-alive
// comments reports the upstream's 400 as an error event opening the stream:
// {"error": {"code": 400, "message": "Provider returned error"}}. The router
// streams from OpenAI-compatible targets by default (SPEC §15), so this is
// what a caller's bad request looks like through such a gateway. SPEC §6.2:
// "Never retry the same model on a 400". The race retried it max_retries
// times on the same target (each a new paid call), as a server_error, the
// provider's fault.
func TestStreamOpening400IsNotRetriedByTheRace(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, ": OPENROUTER PROCESSING\n\n")
		fmt.Fprint(w, `data: {"error":{"code":400,"message":"Provider returned error","metadata":{"provider_name":"Fireworks"}}}`+"\n\n")
	}))
	t.Cleanup(srv.Close)
	adapter, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "gateway", BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "gpt-test", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "gateway", Adapter: adapter, MaxRetries: 2},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	b.Stop()
	if j.State != store.JobFailed {
		t.Fatalf("job %s, want failed", j.State)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the gateway was called %d times for one 400: the same model was retried on a 400 (attempt errors: %s)", n, openingLastError(j))
	}
}

func openingLastError(j *store.Job) string {
	if a := race.LastEndedAttempt(j); a != nil {
		return string(a.Error)
	}
	return ""
}
