package ops

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
)

// A pass recorded before an Anthropic provider's max_tokens left the digest
// of prompts that set their own holds the digest of then (max_tokens in it).
// On the settings of now, GET /v1/conformance and the dashboard count it as
// the gate does (conformance.SameTarget): current and fresh, with no "target
// changed"; so does a pass recorded now, in the form without that
// max_tokens.
func TestConformanceViewsCountAPassRecordedBeforeTheMaxTokensMarker(t *testing.T) {
	db, prompts, triage, record := ConformanceFixture(t)
	cfg, err := config.Parse([]byte(`database_url: postgres://unused
providers:
  - {name: claude, type: anthropic, api_key_env: K, model: claude-test, max_tokens: 8192}
  - {name: claude-now, type: anthropic, api_key_env: K, model: claude-test, max_tokens: 8192}
routes:
  default: {providers: [claude, claude-now]}
`))
	if err != nil {
		t.Fatal(err)
	}
	digests := conformance.TargetDigests(cfg)
	// What `router conformance run` recorded for claude before the upgrade
	// (pinned in package conformance's tests).
	const before = "989c10316413c78a88389f0121d28c89378a1577138e2fbe6853203bf4ace20a"
	if digests("claude", "claude-test", false) != before {
		t.Fatal("precondition: the digest of requests without max_tokens is the one recorded before")
	}
	record("claude", "claude-test", triage.Digest, before)
	record("claude-now", "claude-test", triage.Digest, digests("claude-now", "claude-test", triage.MaxTokens > 0))
	runs, err := db.Store.LatestConformanceRuns(context.Background(), store.ConformanceFilter{MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	j := runJudge{prompts: prompts, modelOf: func(string) string { return "claude-test" }, digestOf: digests}
	for _, r := range j.results(runs) {
		if current := r.Current != nil && *r.Current; !r.Fresh || !current || r.Reason != "" {
			t.Errorf("/v1/conformance entry of %s: fresh %v, current %v, reason %q; want fresh and current", r.Provider, r.Fresh, current, r.Reason)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("runs %+v, want one per provider", runs)
	}
}
