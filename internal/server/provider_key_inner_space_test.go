package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
)

// A provider key with white space or a control character inside it (a
// secret file holding the key and a second line, two keys pasted into one
// variable, "Bearer sk-…" pasted whole) was taken at start: only the white
// space around it is trimmed. No request can carry a key with a line break
// (net/http refuses the header before sending), so every attempt on the
// provider failed — as kind "unknown", not even "misconfigured" — and its
// breaker opened, while the router reported ready. The start refuses it now,
// as it refuses a tenant key with white space inside, naming the provider
// and the variable, never the value; the operator key likewise. Found by
// review.
func TestProviderKeyWithInnerLineBreakIsRefusedAtStart(t *testing.T) {
	var calls atomic.Int32
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "unused", http.StatusInternalServerError)
	}))
	defer llm.Close()
	const first, second = "sk-first-line-0123456789", "sk-second-line-0123456789"
	const ops = "ops-key-0123456789abcdef"
	t.Setenv("PROVIDER_KEY_TEST", first+"\n"+second+"\n")
	t.Setenv("OPS_KEY_TEST", ops+" "+ops)
	cfg, err := config.Parse([]byte(`database_url: postgres://127.0.0.1:1/unused
ops_key_env: OPS_KEY_TEST
providers:
  - {name: p, type: openai, base_url: "` + llm.URL + `/v1", api_key_env: PROVIDER_KEY_TEST, model: m, stream: false, max_retries: 0}
routes:
  default: {providers: [p]}
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(context.Background(), cfg, server.Options{})
	if err == nil {
		s.Close()
		t.Fatal("a provider key with a line break inside was accepted at start; every call then fails before reaching the provider")
	}
	for _, secret := range []string{first, second, ops} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the refusal repeats a key: %v", err)
		}
	}
	for _, want := range []string{"provider p: environment variable PROVIDER_KEY_TEST holds white space or a control character inside the key",
		"ops_key_env: environment variable OPS_KEY_TEST holds white space or a control character inside the key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests reached the provider", n)
	}
}
