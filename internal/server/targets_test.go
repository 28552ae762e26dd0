package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/server"
)

// providers[].max_response_bytes reaches every adapter the configuration
// builds: an answer past it fails with response_too_large (fail over), for a
// provider of type anthropic as for an OpenAI-compatible one.
func TestMaxResponseBytesReachesEveryAdapter(t *testing.T) {
	llm := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
		return anthropicfake.Reply{Text: strings.Repeat("x", 4096), InputTokens: 1, OutputTokens: 1}
	})
	t.Setenv("TARGETS_TEST_KEY", "sk-ant-test")
	cfg, err := config.Parse(fmt.Appendf(nil, `database_url: postgres://unused
providers:
  - {name: claude, type: anthropic, base_url: %q, api_key_env: TARGETS_TEST_KEY, model: claude-test, max_retries: 0, max_response_bytes: 1024}
routes:
  default: {providers: [claude]}
`, llm.URL))
	if err != nil {
		t.Fatal(err)
	}
	targets, err := server.BuildTargets(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for id, tg := range targets {
		resp, err := tg.Provider.Complete(context.Background(), &providers.Request{
			AttemptID: "att-1", JobID: "job-1", Model: tg.Model,
			Messages: []providers.Message{{Role: "user", Content: "hi"}},
		})
		e, ok := providers.AsError(err)
		if resp != nil || !ok || e.Kind != providers.KindResponseTooLarge {
			t.Fatalf("%s: a 4 KiB answer with max_response_bytes 1024: %+v, %v; want response_too_large", id, resp, err)
		}
	}
}

// A provider's deadlines reach the race's target: the adaptive hedge delay
// stays below the first-byte deadline (race.adaptiveDelay).
func TestTargetsCarryTheDeadlines(t *testing.T) {
	cfg, err := config.Parse([]byte(`database_url: postgres://unused
providers:
  - {name: s, type: scripted, timeout: 40s, first_byte_timeout: 6s}
routes:
  default: {providers: [s]}
`))
	if err != nil {
		t.Fatal(err)
	}
	targets, err := server.BuildTargets(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for id, tg := range targets {
		if tg.Timeout.Seconds() != 40 || tg.FirstByteTimeout.Seconds() != 6 {
			t.Fatalf("%s: timeout %s, first byte %s; want 40s and 6s", id, tg.Timeout, tg.FirstByteTimeout)
		}
	}
}
