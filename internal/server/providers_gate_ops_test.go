package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A serving router's /v1/providers shows the conformance gate's word on
// each fallback, asked of the race's own gate: a fallback never run is
// refused with the command that admits it, one with fresh passes of the
// route's prompts is admitted, and the primary (not gated under the default
// gate: fallbacks) has none.
func TestOperatorProvidersShowTheGateOfAServingRouter(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	t.Setenv("SERVER_TEST_KEY", tenantKey)
	prompts, _ := filepath.Abs("../../prompts")
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse([]byte(fmt.Sprintf(`api_keys: [{owner: acme, key_env: SERVER_TEST_KEY}]
providers:
  - {name: g-primary, type: scripted}
  - {name: g-passed, type: scripted}
  - {name: g-fallback, type: scripted}
routes:
  default: {providers: [g-primary, g-passed, g-fallback]}
prompts_dir: %q
log: {level: warn}
`, prompts)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = db.URL
	set, err := server.LoadPrompts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"triage", "invoice"} {
		p, _ := set.Get(name, "")
		if _, err := db.Store.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "g-passed", Model: "scripted-g-passed",
			Prompt: name, PromptVersion: p.Version, Passed: true, CasesTotal: 1, CasesPassed: 1, Duration: time.Second,
			PromptDigest: p.Digest, TargetDigest: conformance.TargetDigests(cfg)("g-passed", "scripted-g-passed", true)}); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := server.New(ctx, cfg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	opsSrv := httptest.NewServer(srv.OpsHandler)
	defer opsSrv.Close()
	status, body := get(t, opsSrv.URL+"/v1/providers", "")
	if status != http.StatusOK {
		t.Fatalf("/v1/providers: %d %s", status, body)
	}
	var reply struct {
		Providers []struct {
			Name        string          `json:"name"`
			Eligible    bool            `json:"eligible"`
			Gate        []ops.GateEntry `json:"gate"`
			GateRefused int             `json:"gate_refused"`
		} `json:"providers"`
	}
	if err := json.Unmarshal([]byte(body), &reply); err != nil {
		t.Fatal(err)
	}
	for _, p := range reply.Providers {
		switch p.Name {
		case "g-primary":
			if len(p.Gate) != 0 {
				t.Errorf("g-primary: %+v; want no gate entry (the primary is not gated under gate: fallbacks)", p.Gate)
			}
		case "g-passed":
			if len(p.Gate) != 2 || p.GateRefused != 0 {
				t.Errorf("g-passed: %+v; want admitted for triage and invoice", p.Gate)
			}
		case "g-fallback":
			if !p.Eligible || len(p.Gate) != 2 || p.GateRefused != 2 {
				t.Errorf("g-fallback: %+v; want eligible by its breaker and refused by the gate for both prompts", p)
			}
			for _, e := range p.Gate {
				cmd := "router conformance run --provider g-fallback --prompt " + e.Prompt
				if e.Command != cmd || !strings.Contains(e.Reason, cmd) || e.Model != "scripted-g-fallback" {
					t.Errorf("g-fallback's refusal %+v; want the gate's reason naming %q", e, cmd)
				}
			}
		}
	}
}
