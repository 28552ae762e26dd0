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
		`"ghost" is not a configured provider`, `hedge_after: "soon"`, "routes.empty.targets", `conformance.gate: "sometimes"`} {
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

func TestEveryProblemInOneMessageIncludingUnknownFields(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	_, err := Parse([]byte(`
listne: 127.0.0.1:1
providers:
  - {name: a, type: openai, base_url: http://x/v1, model: m, timout: 5s, timeout: 10s, first_byte_timeout: 10s}
routes:
  default:
    targets: [{provider: a, modle: x}]
    hedge_budget: {percent: 300}
idempotency: {retention: forever}
`))
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{"line 2: listne is not a known setting", "providers[0].timout is not a known setting",
		"routes.default.targets[0].modle is not a known setting", `"forever" is not a duration`,
		"first_byte_timeout (10s) must be below timeout (10s)", "hedge_budget.percent: 300"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

func TestTargetsDefaultsAndIDs(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`
providers:
  - {name: openai, type: openai, base_url: http://x/v1, model: gpt-4o}
  - {name: azure, type: openai, base_url: http://y/v1}
routes:
  smart: {targets: [{provider: openai}, {provider: azure, model: gpt-4o-mini}, {provider: openai, model: gpt-4o-mini}]}
  solo: {providers: [openai]}
`))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, rt := range c.RouteTargets(c.Routes["smart"]) {
		ids = append(ids, rt.ID+"="+rt.Model)
	}
	if got := strings.Join(ids, " "); got != "openai=gpt-4o azure/gpt-4o-mini=gpt-4o-mini openai/gpt-4o-mini=gpt-4o-mini" {
		t.Fatalf("target ids: %s", got)
	}
	smart, solo := c.Routes["smart"], c.Routes["solo"]
	if _, adaptive := smart.HedgeDelay(); !adaptive || smart.HedgeMin.D() != 2*time.Second || smart.HedgeMax.D() != 10*time.Second ||
		*smart.HedgeBudget.Percent != 10 || *smart.HedgeBudget.MinConcurrent != 3 {
		t.Fatalf("hedging defaults of a route of 3 targets: %+v", smart)
	}
	if d, adaptive := solo.HedgeDelay(); d != 0 || adaptive {
		t.Fatalf("a route of one target hedges: %+v", solo)
	}
	p := c.Providers[0]
	if !*p.Stream || p.Timeout.D() != time.Minute || p.FirstByteTimeout.D() != 30*time.Second || p.StreamIdleTimeout.D() != 15*time.Second {
		t.Fatalf("provider deadline defaults %+v", p)
	}
}

func TestAnthropicProviderAndPrices(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`
providers:
  - {name: claude, type: anthropic, api_key_env: ANTHROPIC_API_KEY, model: claude-sonnet-4-5, max_tokens: 2048,
     price: {input_per_mtok: 3, output_per_mtok: 15}}
routes:
  default: {targets: [{provider: claude}, {provider: claude, model: claude-haiku-4-5, price: {input_per_mtok: 1, output_per_mtok: 5}}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Providers[0]; p.Type != "anthropic" || p.BaseURL != "" || p.MaxTokens != 2048 || !*p.Stream {
		t.Fatalf("provider %+v", p)
	}
	ts := c.RouteTargets(c.Routes["default"])
	if len(ts) != 2 || ts[0].PriceOrDefault().InputPerMTok != 3 || ts[1].PriceOrDefault().OutputPerMTok != 5 {
		t.Fatalf("target prices %+v", ts)
	}
	_, err = Parse([]byte(`
providers:
  - {name: claude, type: anthropic, max_tokens: -1, price: {input_per_mtok: -1, output_per_mtok: 1}}
routes:
  default: {providers: [claude]}
`))
	for _, want := range []string{"model is required for type anthropic", "max_tokens must be 0", "price: input_per_mtok and output_per_mtok must be 0 or more"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
}

// A URL whose scheme is written in capitals (or with white space around it)
// is accepted, so it is handed on as pgx reads URLs: a lower-case scheme. pgx
// took POSTGRES://… for key=value settings and connected to the local socket
// as the OS user, ignoring the URL. Found by review.
func TestDatabaseURLSchemeInAnyCase(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for in, want := range map[string]string{
		"database_url: POSTGRES://u:pw@db.example.com/router\n":    "postgres://u:pw@db.example.com/router",
		"database_url: ' PostgreSQL://u@db.example.com/router '\n": "postgresql://u@db.example.com/router",
		"database_url: host=db.example.com dbname=router\n":        "host=db.example.com dbname=router",
	} {
		c, err := Parse([]byte(in))
		if err != nil {
			t.Errorf("%q: %v", in, err)
		} else if c.DatabaseURL != want {
			t.Errorf("%q: %q, want %q", in, c.DatabaseURL, want)
		}
	}
}
