package config

import (
	"strings"
	"testing"
	"time"
)

func TestDemoConfigLoadsWithDefaults(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Load("../../demo/router.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Idempotency.Retention.D() != 24*time.Hour || c.HTTP.MaxBodyBytes != 1<<20 || c.Conformance.Gate != "off" {
		t.Fatalf("defaults: %+v", c)
	}
	r := c.Routes["default"]
	if d, adaptive := r.HedgeDelay(); d != time.Second || adaptive || r.MaxInflight != 2 || r.MaxAttempts != 4 {
		t.Fatalf("route %+v", r)
	}
	if *c.Providers[0].MaxRetries != 1 || c.Providers[0].Breaker.ConsecutiveFailures != 5 {
		t.Fatalf("provider defaults %+v", c.Providers[0])
	}
	if c.Dir != "../../demo" {
		t.Fatalf("dir %q", c.Dir)
	}
}

func TestEmptyConfigDefaults(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8080" || c.Conformance.Gate != "fallbacks" || c.Conformance.MaxAge.D() != 168*time.Hour ||
		c.PromptsDir != "prompts" || !*c.AutoMigrate || c.Execution.Lease.D() != 30*time.Second ||
		c.Execution.Retry.Base.D() != 200*time.Millisecond || c.Execution.Retry.MaxRetryAfter.D() != 30*time.Second {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestDatabaseURLFromEnvironment(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://x@y/z")
	c, err := Parse([]byte("database_url: postgres://file/db\n"))
	if err != nil || c.DatabaseURL != "postgres://x@y/z" {
		t.Fatalf("%v %v", c, err)
	}
}

func TestInvalidConfigNamesEveryField(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	_, err := Parse([]byte(`
providers:
  - {name: a, type: openai}
  - {name: a, type: carrier-pigeon}
routes:
  default: {providers: [a, ghost], hedge_after: soon}
  empty: {providers: []}
conformance: {gate: sometimes}
`))
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{"base_url is required", "model is required", "used twice", `"carrier-pigeon" is not openai, anthropic or scripted`,
		`"ghost" is not a configured provider`, `hedge_after: "soon"`, "routes.empty.providers", `conformance.gate: "sometimes"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

func TestUnknownFieldsAndBadDurationsAreErrors(t *testing.T) {
	if _, err := Parse([]byte("listne: 127.0.0.1:1\n")); err == nil || !strings.Contains(err.Error(), "listne") {
		t.Fatalf("typo accepted: %v", err)
	}
	if _, err := Parse([]byte("idempotency: {retention: forever}\n")); err == nil || !strings.Contains(err.Error(), "not a duration") {
		t.Fatalf("bad duration: %v", err)
	}
}

func TestAnthropicProvider(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`
providers:
  - {name: claude, type: anthropic, api_key_env: ANTHROPIC_API_KEY, model: claude-sonnet-4-5, max_tokens: 2048}
routes:
  default: {providers: [claude]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Providers[0]; p.Type != "anthropic" || p.BaseURL != "" || p.MaxTokens != 2048 {
		t.Fatalf("provider %+v", p)
	}
	_, err = Parse([]byte(`
providers:
  - {name: claude, type: anthropic, max_tokens: -1}
routes:
  default: {providers: [claude]}
`))
	if err == nil || !strings.Contains(err.Error(), "model is required for type anthropic") || !strings.Contains(err.Error(), "max_tokens must be 0") {
		t.Fatalf("missing model / negative max_tokens: %v", err)
	}
}
