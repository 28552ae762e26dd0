package ops_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
)

// gateView is a provider of GET /v1/providers with its conformance gate.
type gateView struct {
	Name        string          `json:"name"`
	Eligible    bool            `json:"eligible"`
	Gate        []ops.GateEntry `json:"gate"`
	GateRefused int             `json:"gate_refused"`
	GateStatus  string          `json:"gate_status"`
}

func providersWithGate(t *testing.T, url string) map[string]gateView {
	t.Helper()
	resp, err := http.Get(url + "/v1/providers")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Providers []gateView `json:"providers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/providers: %d %v", resp.StatusCode, err)
	}
	out := map[string]gateView{}
	for _, p := range body.Providers {
		out[p.Name] = p
	}
	return out
}

// entry is the gate's entry of route and prompt in v for jobs, failing
// when there is not exactly one.
func entry(t *testing.T, v gateView, route, prompt, jobs string) ops.GateEntry {
	t.Helper()
	var found []ops.GateEntry
	for _, e := range v.Gate {
		if e.Route == route && e.Prompt == prompt && e.Jobs == jobs {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d gate entries of route %s, prompt %s, jobs %s, want 1: %+v", v.Name, len(found), route, prompt, jobs, v.Gate)
	}
	return found[0]
}

// GET /v1/providers showed a fallback the conformance gate keeps out of every
// route as "eligible": true and nothing else (eligible is only the breaker's
// word), so an operator believed failover worked. It now shows the gate's
// word per route and prompt where the provider is gated — refused with the
// gate's reason and the command that admits it, or admitted once a fresh pass
// is recorded — and the dashboard shows the refusals; a primary, which the
// default gate (fallbacks) does not judge, shows none.
func TestProvidersShowTheConformanceGate(t *testing.T) {
	db, prompts, triage, _ := ops.ConformanceFixture(t)
	modelOf := func(string) string { return "m" }
	gate := conformance.NewGate(db.Store, conformance.GateFallbacks, time.Hour, conformance.TargetModels(modelOf), conformance.CacheFor(0))
	srv := httptest.NewServer(ops.New(ops.Config{Providers: []string{"first", "second"}, TargetModels: modelOf, ConformanceMaxAge: time.Hour,
		Gate: gate, GateRoutes: []ops.GateRoute{
			{Name: "default", Targets: []string{"first", "second"}},                           // the prompts' route
			{Name: "chat", Targets: []string{"second", "first"}, ConformancePrompt: "triage"}, // a chat route, the other way round
		}}, db.Store, prompts, nil))
	defer srv.Close()

	got := providersWithGate(t, srv.URL)
	second := got["second"]
	if !second.Eligible || second.GateStatus != "" {
		t.Fatalf("second: %+v; want eligible (its breaker admits it) and a gate status", second)
	}
	// The fallback of default, never run: refused for both prompts of the
	// route, with the command that admits it.
	for _, p := range []string{"triage@3", "invoice@3"} {
		name, _, _ := strings.Cut(p, "@")
		e := entry(t, second, "default", name, ops.JobsPrompt)
		cmd := "router conformance run --provider second --prompt " + name
		if e.Admitted || e.Role != store.RoleFailover || e.Jobs != "prompt" || e.Model != "m" || e.Command != cmd ||
			!strings.Contains(e.Reason, "no passing conformance run for "+p) || !strings.Contains(e.Reason, "`"+cmd+"`") {
			t.Errorf("second on default for %s: %+v; want refused as a failover with the gate's reason and %q", p, e, cmd)
		}
	}
	if len(second.Gate) != 2 || second.GateRefused != 2 {
		t.Errorf("second: %+v; want its two refusals on default and nothing on chat, where it is the primary", second.Gate)
	}
	// first is the primary of default, not gated there; on chat it is the
	// fallback its conformance_prompt gates, for the chat completions.
	first := got["first"]
	if e := entry(t, first, "chat", "triage", ops.JobsChat); e.Admitted || e.Command != "router conformance run --provider first --prompt triage" {
		t.Errorf("first on chat: %+v; want refused for its chat completions", e)
	}
	// A prompt job may name route chat in its `route`: the gate judges
	// first there for every prompt's jobs too.
	for _, name := range []string{"triage", "invoice"} {
		if e := entry(t, first, "chat", name, ops.JobsPromptByRequest); e.Admitted || e.Command != "router conformance run --provider first --prompt "+name {
			t.Errorf("first on chat for %s jobs naming the route: %+v; want refused", name, e)
		}
	}
	if len(first.Gate) != 3 || first.GateRefused != 3 {
		t.Errorf("first: %+v; want only its refusals on chat (the primary of default is not gated)", first.Gate)
	}

	// The dashboard's providers table shows the refusals with the command.
	row := providerRow(t, getPage(t, srv.URL+"/dashboard"), "second")
	for _, want := range []string{`data-gate-refused="2"`, `<span class="badge no">gated</span>`,
		"route default (failover), invoice@3 prompt jobs: no passing conformance run for invoice@3",
		"run <code>router conformance run --provider second --prompt triage</code>"} {
		if !strings.Contains(row, want) {
			t.Errorf("the dashboard's row of second does not say %q:\n%s", want, row)
		}
	}

	// A fresh pass of triage admits second for it; invoice stays refused.
	if _, err := db.Store.RecordConformanceRun(context.Background(), store.NewConformanceRun{Provider: "second", Model: "m",
		Prompt: "triage", PromptVersion: "3", PromptDigest: triage.Digest, TargetDigest: strings.Repeat("b", 64),
		Passed: true, CasesTotal: 1, CasesPassed: 1}); err != nil {
		t.Fatal(err)
	}
	second = providersWithGate(t, srv.URL)["second"]
	if e := entry(t, second, "default", "triage", ops.JobsPrompt); !e.Admitted || e.Reason != "" || e.Command != "" {
		t.Errorf("second on default for triage after its pass: %+v; want admitted", e)
	}
	if e := entry(t, second, "default", "invoice", ops.JobsPrompt); e.Admitted {
		t.Errorf("second on default for invoice: %+v; want still refused (it passed triage only)", e)
	}
	if second.GateRefused != 1 {
		t.Errorf("second: %d refused, want 1", second.GateRefused)
	}
	row = providerRow(t, getPage(t, srv.URL+"/dashboard"), "second")
	if strings.Contains(row, "--prompt triage") || !strings.Contains(row, "--prompt invoice") {
		t.Errorf("the dashboard's row of second after the pass of triage:\n%s\nwant only invoice's refusal", row)
	}
}

// Under conformance.gate: all the primary is gated too; under off nothing is,
// and the view says so.
func TestProvidersGateModes(t *testing.T) {
	db, prompts, _, _ := ops.ConformanceFixture(t)
	for _, mode := range []string{conformance.GateAll, conformance.GateOff} {
		gate := conformance.NewGate(db.Store, mode, time.Hour, conformance.CacheFor(0))
		srv := httptest.NewServer(ops.New(ops.Config{Providers: []string{"first"}, ConformanceMaxAge: time.Hour,
			Gate: gate, GateRoutes: []ops.GateRoute{{Name: "default", Targets: []string{"first"}}}}, db.Store, prompts, nil))
		first := providersWithGate(t, srv.URL)["first"]
		srv.Close()
		switch mode {
		case conformance.GateAll:
			if e := entry(t, first, "default", "triage", ops.JobsPrompt); e.Admitted || e.Role != store.RolePrimary || first.GateRefused != 2 {
				t.Errorf("gate all: %+v; want the primary refused for both prompts", first.Gate)
			}
		case conformance.GateOff:
			if len(first.Gate) != 0 || !strings.HasPrefix(first.GateStatus, "off") {
				t.Errorf("gate off: %+v; want no entry and a status saying the gate is off", first)
			}
		}
	}
}

// providerRow is the dashboard's providers table row of name, unescaped.
func providerRow(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr class="provider" data-provider="` + regexp.QuoteMeta(name) + `".*?</tr>`).FindString(page)
	if m == "" {
		t.Fatalf("no dashboard row of provider %s:\n%s", name, page)
	}
	return html.UnescapeString(m)
}
