package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/server"
)

// A provider key made from a file (kubectl create secret --from-file, an env
// file, a vault template) ends in a newline. It is trimmed, as tenant keys
// are (keys_whitespace_test.go): with the newline no request could carry it
// (net/http refuses the header), so every attempt failed and the breaker
// opened. Found by review.
func TestProviderKeyIsTrimmed(t *testing.T) {
	var got string
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	defer llm.Close()
	t.Setenv("PROVIDER_KEY_TEST", "sk-test-key\n")
	targets, err := server.BuildTargets(providerKeyConfig(t, llm.URL+"/v1"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := targets["p"].Provider.Complete(context.Background(), &providers.Request{
		AttemptID: "att-1", JobID: "job-1", Model: "m",
		Messages: []providers.Message{{Role: "user", Content: "hi"}},
	})
	if err != nil || resp == nil || got != "Bearer sk-test-key" {
		t.Fatalf("a provider key with a trailing newline: %v, Authorization %q", err, got)
	}
}

// A key of only white space is refused at start-up, naming the variable.
func TestProviderKeyOfOnlyWhiteSpaceRefused(t *testing.T) {
	t.Setenv("PROVIDER_KEY_TEST", " \n")
	_, err := server.BuildTargets(providerKeyConfig(t, "http://127.0.0.1:1/v1"))
	if err == nil || !strings.Contains(err.Error(), "provider p: environment variable PROVIDER_KEY_TEST is empty or only white space: export the provider's API key") {
		t.Fatalf("a key of white space: %v", err)
	}
}

func providerKeyConfig(t *testing.T, baseURL string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(fmt.Appendf(nil, `database_url: postgres://unused
providers:
  - {name: p, type: openai, base_url: %q, api_key_env: PROVIDER_KEY_TEST, model: m, stream: false, max_retries: 0}
routes:
  default: {providers: [p]}
`, baseURL))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Every provider whose key is missing is named at start-up, in one message:
// an operator deploying several providers learns of them all at once, not
// one restart each.
func TestEveryMissingProviderKeyNamedAtOnce(t *testing.T) {
	t.Setenv("MISSING_KEY_A", "")
	t.Setenv("MISSING_KEY_B", " ")
	cfg, err := config.Parse([]byte(`database_url: postgres://unused
providers:
  - {name: a, type: openai, base_url: "http://127.0.0.1:1/v1", api_key_env: MISSING_KEY_A, model: m}
  - {name: b, type: openai, base_url: "http://127.0.0.1:2/v1", api_key_env: MISSING_KEY_B, model: m}
routes:
  default: {providers: [a, b], models: [other]}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = server.BuildTargets(cfg)
	if err == nil || !strings.Contains(err.Error(), "provider a: environment variable MISSING_KEY_A") ||
		!strings.Contains(err.Error(), "provider b: environment variable MISSING_KEY_B") {
		t.Fatalf("two providers without keys: %v; want both named", err)
	}
	if n := strings.Count(err.Error(), "provider a:"); n != 1 {
		t.Errorf("provider a named %d times: %v", n, err)
	}
}

// Every variable the router reads at start-up — providers' keys, tenants'
// keys, the operator key, webhook signing secrets — is checked before any is
// refused: one start names them all, not one restart each.
func TestEveryMissingVariableNamedAtOnce(t *testing.T) {
	for _, v := range []string{"MISSING_PROVIDER_KEY", "MISSING_TENANT_KEY", "MISSING_OPS_KEY", "MISSING_WEBHOOK_SECRET"} {
		t.Setenv(v, "")
	}
	cfg, err := config.Parse([]byte(`database_url: postgres://127.0.0.1:1/unused
ops_key_env: MISSING_OPS_KEY
api_keys:
  - owner: acme
    key_env: MISSING_TENANT_KEY
    webhook: {url: "http://127.0.0.1:1/hook", secret_env: MISSING_WEBHOOK_SECRET}
providers:
  - {name: a, type: openai, base_url: "http://127.0.0.1:1/v1", api_key_env: MISSING_PROVIDER_KEY, model: m}
routes:
  default: {providers: [a]}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = server.New(context.Background(), cfg, server.Options{})
	if err == nil {
		t.Fatal("a router started with four variables empty")
	}
	for _, want := range []string{"MISSING_PROVIDER_KEY", "MISSING_TENANT_KEY", "MISSING_OPS_KEY", "MISSING_WEBHOOK_SECRET"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("start-up error does not name %s:\n%v", want, err)
		}
	}
}

// A prompt problem and a missing variable are both named by one start: the
// prompts used to be refused first, and the variables only on the next
// start.
func TestPromptProblemAndMissingVariableNamedAtOnce(t *testing.T) {
	t.Setenv("MISSING_PROVIDER_KEY", "")
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(`database_url: postgres://127.0.0.1:1/unused
prompts_dir: ` + dir + `
providers:
  - {name: a, type: openai, base_url: "http://127.0.0.1:1/v1", api_key_env: MISSING_PROVIDER_KEY, model: m}
routes:
  default: {providers: [a], conformance_prompt: no-such-prompt}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = server.New(context.Background(), cfg, server.Options{})
	if err == nil {
		t.Fatal("a router started with a missing prompt and an empty provider key")
	}
	for _, want := range []string{"no-such-prompt", "MISSING_PROVIDER_KEY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("start-up error does not name %s:\n%v", want, err)
		}
	}
}
