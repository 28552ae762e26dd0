package server_test

import (
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
)

// An Anthropic target carries the max_tokens its adapter sends when a
// request sets none (providers[].max_tokens, default 4096), so that routing
// counts it against the context window; an OpenAI-compatible target sends
// none. Found by review.
func TestTargetsCarryTheDefaultMaxTokens(t *testing.T) {
	t.Setenv("TARGETS_TEST_KEY", "sk-test")
	t.Setenv("TARGETS_TEST_OPENAI_KEY", "sk-test")
	cfg, err := config.Parse([]byte(`database_url: postgres://unused
providers:
  - {name: claude, type: anthropic, api_key_env: TARGETS_TEST_KEY, model: claude-test}
  - {name: claude-short, type: anthropic, api_key_env: TARGETS_TEST_KEY, model: claude-test, max_tokens: 1000}
  - {name: openai, type: openai, base_url: "http://127.0.0.1:1/v1", api_key_env: TARGETS_TEST_OPENAI_KEY, model: gpt-4o}
routes:
  default: {providers: [claude, claude-short, openai]}
`))
	if err != nil {
		t.Fatal(err)
	}
	targets, err := server.BuildTargets(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int{"claude": 4096, "claude-short": 1000, "openai": 0} {
		if tg := targets[id]; tg == nil || tg.DefaultMaxTokens != want {
			t.Errorf("target %s: %+v, want default max_tokens %d", id, tg, want)
		}
	}
}
