package breaker_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// Anthropic answers an account out of credit with HTTP 400
// invalid_request_error "Your credit balance is too low to access the
// Anthropic API...". docs/operations.md: a target that cannot serve because
// of its own account (402, quota, auth) "opens its breaker like one that is
// down", and the job fails over. It was taken for the caller's bad request:
// the job stopped without failover, the breaker counted a success and never
// opened, and the tenant read the router's billing message. Found by review.
func TestAnthropicOutOfCreditFailsOverAndOpensTheBreaker(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("request-id", "req_011")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},"request_id":"req_011"}`))
	}))
	defer srv.Close()
	anth, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "claude", BaseURL: srv.URL, APIKey: "k", Model: "claude-x", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	set := breaker.New(map[string]breaker.Settings{
		"claude":   {ConsecutiveFailures: 2, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 2, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	rb := racetest.New(t, racetest.Options{Route: race.Route{}, Admission: set, Providers: []racetest.Provider{
		{Name: "claude", Adapter: anth},
		{Name: "fallback", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} }},
	}})
	for i := range 3 {
		j := rb.WaitSettled(t, rb.Submit(t).ID)
		if j.State != store.JobSucceeded {
			t.Errorf("job %d %s (error %q): the router's own account out of credit stopped the job instead of failing over", i, j.State, deref(j.Error))
		}
		for _, a := range j.Attempts {
			if strings.Contains(strings.ToLower(string(a.Error)), "credit balance") {
				t.Errorf("job %d: the tenant reads the router's billing message: %s", i, a.Error)
			}
		}
	}
	for _, s := range set.Snapshot() {
		if s.Provider == "claude" && s.State != breaker.StateOpen {
			t.Errorf("claude's breaker is %s (%+v) after 3 out-of-credit answers, want open", s.State, s.Counts)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
