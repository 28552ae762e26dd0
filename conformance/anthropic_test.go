package conformance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/server"
)

// lastText is the text of the last block of the last message of a Messages API
// request: the rendered last message of a suite case.
func lastText(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	if len(msgs) == 0 {
		return ""
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	blocks, _ := last["content"].([]any)
	for i := len(blocks) - 1; i >= 0; i-- {
		if b, _ := blocks[i].(map[string]any); b["type"] == "text" {
			s, _ := b["text"].(string)
			return s
		}
	}
	return ""
}

// anthropicSuiteFake answers each suite case with its reference reply (changed
// by mutate when set) in the Messages API wire format.
func anthropicSuiteFake(t *testing.T, a answers, mutate func(ans answer, content string) string) *anthropicfake.Server {
	return anthropicfake.New(t, func(r anthropicfake.Request) anthropicfake.Reply {
		ans, ok := a[lastText(r.Body)]
		if !ok {
			return anthropicfake.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "unknown case"}
		}
		content := ans.reference
		if mutate != nil {
			content = mutate(ans, content)
		}
		model, _ := r.Body["model"].(string)
		return anthropicfake.Reply{Text: content, Model: model + "-20250101", InputTokens: 100, OutputTokens: 20}
	})
}

// anthropicTargets builds the targets of a configuration with two providers of
// type anthropic (streamed and not) at baseURL, the way `router conformance
// run` does.
func anthropicTargets(t *testing.T, e *env, baseURL string) {
	t.Helper()
	t.Setenv("CONFORMANCE_ANTHROPIC_KEY", "sk-ant-test")
	cfg, err := config.Parse(fmt.Appendf(nil, `database_url: postgres://unused
providers:
  - {name: claude-stream, type: anthropic, base_url: %[1]q, api_key_env: CONFORMANCE_ANTHROPIC_KEY, model: claude-test, max_retries: 0}
  - {name: claude-plain, type: anthropic, base_url: %[1]q, api_key_env: CONFORMANCE_ANTHROPIC_KEY, model: claude-test, stream: false, max_retries: 0}
routes:
  default: {providers: [claude-stream, claude-plain]}
`, baseURL))
	if err != nil {
		t.Fatal(err)
	}
	targets, err := server.BuildTargets(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, tg := range targets {
		e.targets[name] = tg
	}
}

// The suites run through the Anthropic Messages adapter (type: anthropic)
// against an Anthropic-compatible server: reference answers pass and are
// recorded; an answer wrapped in prose fails its case, is recorded as failing
// and leaves the provider ineligible.
func TestRunnerThroughAnthropicAdapter(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	valid := anthropicSuiteFake(t, e.answers, nil)
	anthropicTargets(t, e, valid.URL)
	rep := e.run(t, conformance.Options{})
	if !rep.Passed || len(rep.Results) != 2*len(e.suites) {
		var b strings.Builder
		_ = rep.WriteTable(&b)
		t.Fatalf("report:\n%s", b.String())
	}
	for _, r := range rep.Results {
		if r.RunID == 0 {
			t.Fatalf("%s on %s: not recorded", r.Provider, r.ID())
		}
		for _, c := range r.Cases {
			if c.Usage == nil || c.Usage.PromptTokens != 100 || c.Usage.CompletionTokens != 20 || c.ResponseModel != "claude-test-20250101" {
				t.Fatalf("%s %s: usage %+v model %q", r.Provider, c.Name, c.Usage, c.ResponseModel)
			}
		}
	}
	reqs := valid.Requests()
	if want := 2 * (len(e.suites["triage"].Cases) + len(e.suites["invoice"].Cases)); len(reqs) != want {
		t.Fatalf("%d requests, want %d", len(reqs), want)
	}
	streamed := 0
	for _, r := range reqs {
		if s, _ := r.Body["stream"].(bool); s {
			streamed++
		}
		oc, _ := r.Body["output_config"].(map[string]any)
		format, _ := oc["format"].(map[string]any)
		if r.Body["model"] != "claude-test" || format["type"] != "json_schema" || format["schema"] == nil ||
			r.Header.Get("x-api-key")+r.Header.Get("Authorization") == "" {
			t.Fatalf("request: model %v output_config %v", r.Body["model"], r.Body["output_config"])
		}
	}
	if streamed != len(reqs)/2 {
		t.Fatalf("%d of %d requests streamed, want half", streamed, len(reqs))
	}
	var n int
	if err := e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM conformance_runs WHERE passed AND provider LIKE 'claude-%'`).Scan(&n); err != nil || n != 2*len(e.suites) {
		t.Fatalf("%d passing runs stored (%v)", n, err)
	}
	st, err := e.st.ConformanceStanding(ctx, "claude-stream", "triage", "3", time.Hour)
	if err != nil || !st.Eligible() {
		t.Fatalf("after the passing run: eligible=%v (%v)", st.Eligible(), err)
	}

	// A server that wraps one case's answer in prose: that case fails with the
	// rule, the run is recorded as failing, the provider is no longer eligible.
	invalid := anthropicSuiteFake(t, e.answers, func(ans answer, content string) string {
		if ans.caseName == "german-delivery-missing" {
			return "Here is the triage: " + content
		}
		return content
	})
	anthropicTargets(t, e, invalid.URL)
	rep = e.run(t, conformance.Options{Providers: []string{"claude-stream"}, PromptNames: []string{"triage"}})
	r := rep.Results[0]
	if rep.Passed || r.Passed || r.CasesPassed != r.CasesTotal-1 {
		t.Fatalf("prose answer: passed=%v %d/%d", rep.Passed, r.CasesPassed, r.CasesTotal)
	}
	for _, c := range r.Cases {
		if c.Name == "german-delivery-missing" && (c.Passed || c.Stage != conformance.StageContract ||
			c.Failures[0].Rule != "json.syntax" || !strings.HasPrefix(c.Output, "Here is the triage")) {
			t.Fatalf("prose case: %+v", c)
		}
	}
	var passed bool
	var casesPassed int
	if err := e.db.Pool.QueryRow(ctx, `SELECT passed, cases_passed FROM conformance_runs WHERE id = $1`, r.RunID).Scan(&passed, &casesPassed); err != nil ||
		passed || casesPassed != r.CasesTotal-1 {
		t.Fatalf("stored run %d: passed=%v cases_passed=%d (%v)", r.RunID, passed, casesPassed, err)
	}
	st, err = e.st.ConformanceStanding(ctx, "claude-stream", "triage", "3", time.Hour)
	if err != nil || st.Eligible() {
		t.Fatalf("after the failing run: eligible=%v (%v)", st.Eligible(), err)
	}
}
