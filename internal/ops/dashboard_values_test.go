package ops_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
)

// dashboardPage is GET /dashboard of an operator surface on rb's store.
func dashboardPage(t *testing.T, rb *racetest.Bundle) string {
	t.Helper()
	srv := httptest.NewServer(ops.New(ops.Config{}, rb.Store, nil, nil))
	defer srv.Close()
	return getPage(t, srv.URL+"/dashboard")
}

// docs/operations.md: the dashboard shows owners, operations, states,
// providers and timings, never inputs, prompts or results. A job whose answer
// breaks the prompt's contract fails with an error that quotes the output
// (the violation's message), and the dashboard printed that error for every
// owner's recent jobs. It now says which rule broke where, without the value.
// Found by review.
func TestDashboardShowsNoOutputValues(t *testing.T) {
	const secret = "Jane Doe 4111-1111-1111-1111"
	bad := `{"category":"` + secret + `","priority":"high","summary":"s","needs_human":false}`
	rb := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: bad} }},
	}})
	j := rb.WaitSettled(t, rb.Submit(t).ID)
	if j.Error == nil || !strings.Contains(*j.Error, "4111") {
		t.Fatalf("job %s, error %v: want a failure whose error quotes the output (what the dashboard must not show)", j.State, j.Error)
	}
	page := dashboardPage(t, rb)
	if i := strings.Index(page, "4111-1111-1111-1111"); i >= 0 {
		t.Fatalf("the dashboard shows a tenant's output value: ...%s...", page[max(i-120, 0):min(i+40, len(page))])
	}
	if !strings.Contains(page, "#1 primary: output breaks the contract: ") || !strings.Contains(page, " at /category") {
		t.Errorf("the dashboard does not say which rule the output broke, and where:\n%s", jobSection(page))
	}
}

// A job that failed on a provider's error shows the error's kind and status.
func TestDashboardShowsAttemptErrorKind(t *testing.T) {
	rb := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: http.StatusBadRequest} }},
	}})
	j := rb.WaitSettled(t, rb.Submit(t).ID)
	if j.State != "failed" {
		t.Fatalf("job %s, want failed on the provider's 400", j.State)
	}
	page := dashboardPage(t, rb)
	if !strings.Contains(page, "#1 primary: bad_request (HTTP 400)") {
		t.Errorf("the dashboard does not say the attempt failed with bad_request (HTTP 400):\n%s", jobSection(page))
	}
}

// jobSection is the dashboard's recent-jobs section, for failure messages.
func jobSection(page string) string {
	if i := strings.Index(page, `<section id="jobs">`); i >= 0 {
		page = page[i:]
	}
	return page[:min(len(page), 3000)]
}
