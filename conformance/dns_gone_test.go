package conformance_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A fallback's endpoint whose host name does not resolve ("no such host")
// fails every case with the live race's misconfigured error, but the run is
// inconclusive and records nothing: container platforms give that answer
// while a service restarts (Docker's DNS for a stopped container, a
// Kubernetes headless service with no ready pod), and a model server
// restarting during a nightly run must not lose its pass for a day. The
// error's Code (host_not_found), not its text, says so.
func TestUnresolvableHostIsInconclusive(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	triage := mustPrompt(t, e, "triage")
	// The lookup's answer is given, not asked of the machine's resolver: the
	// test must not depend on what a CI runner's DNS says of .invalid.
	nxdomain := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "backup-vllm.invalid", IsNotFound: true}}
	}}}
	p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "backup", BaseURL: "http://backup-vllm.invalid/v1", Model: "m", Timeout: 10 * time.Second,
		HTTPClient: nxdomain})
	if err != nil {
		t.Fatal(err)
	}
	e.targets["backup"] = &race.Target{Provider: p, Model: "m", ContextWindow: 128000, Timeout: 10 * time.Second}
	// Its pass of last week, on the same settings.
	if _, err := e.st.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "backup", Model: "m", Prompt: "triage",
		PromptVersion: triage.Version, PromptDigest: triage.Digest, TargetDigest: testTargetDigests("backup", "m", true),
		Passed: true, CasesTotal: 10, CasesPassed: 10}); err != nil {
		t.Fatal(err)
	}
	rep := e.run(t, conformance.Options{Providers: []string{"backup"}, PromptNames: []string{"triage"}})
	res := result(t, rep, "backup", "triage")
	if len(res.Cases) == 0 || !strings.Contains(res.Cases[0].Failures[0].Message, "DNS") {
		t.Fatalf("set-up: want the cases to fail on the DNS lookup, got %+v", res.Cases)
	}
	if !res.Inconclusive || res.Recorded != nil && *res.Recorded {
		t.Errorf("a host that does not resolve is reported inconclusive=%v, recorded=%v: %q; want inconclusive, not recorded", res.Inconclusive, res.Recorded, res.Cases[0].Failures[0].Message)
	}
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, 168*time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(string) string { return "m" }), conformance.TargetSettings(testTargetDigests))
	if ok, why := gate.Allow(ctx, "backup", triage, store.RoleFailover); !ok {
		t.Errorf("after a run in which backup's host did not resolve, the gate refuses it for failover: %s; want its pass kept", why)
	}
}
