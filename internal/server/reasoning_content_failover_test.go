package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// capturedLLM is a fake OpenAI-compatible provider that keeps every request's
// messages and answers each with status (503: unavailable, failed over) or,
// for 200, a plain chat.completion.
type capturedLLM struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies [][]map[string]any
}

func newCapturedLLM(t *testing.T, status int) *capturedLLM {
	c := &capturedLLM{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []map[string]any `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		c.mu.Lock()
		c.bodies = append(c.bodies, req.Messages)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
			fmt.Fprint(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
			return
		}
		fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1741569952,"model":"m",
			"choices":[{"index":0,"message":{"role":"assistant","content":"It is 11C in Paris."},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":50,"completion_tokens":8,"total_tokens":58}}`)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// providersConfig is newConfig with providers and routes of its own (the
// YAML of both keys).
func providersConfig(t *testing.T, db *testdb.DB, providersAndRoutes string) *config.Config {
	t.Helper()
	t.Setenv("SERVER_TEST_KEY", tenantKey)
	prompts, _ := filepath.Abs("../../prompts")
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse(fmt.Appendf(nil, "api_keys: [{owner: acme, key_env: SERVER_TEST_KEY}]\n%sprompts_dir: %q\nconformance: {gate: off}\nlog: {level: warn}\n",
		providersAndRoutes, prompts))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = db.URL
	return cfg
}

func (c *capturedLLM) requests() [][]map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]map[string]any(nil), c.bodies...)
}

// An assistant turn's reasoning_content in the caller's history reaches only
// the targets whose provider sets send_reasoning_content (DeepSeek's thinking
// mode needs it in a tool loop; Mistral and others refuse the unknown member
// with a 400, which is the caller's fault and not failed over). Here the
// route's primary, without the setting, gets the turn without it and fails
// (503); the failover, with it, gets the turn with it and answers.
func TestReasoningContentReachesOnlyProvidersThatSendIt(t *testing.T) {
	db := testdb.New(t, store.Options{})
	plain, thinking := newCapturedLLM(t, http.StatusServiceUnavailable), newCapturedLLM(t, http.StatusOK)
	cfg := providersConfig(t, db, fmt.Sprintf(`providers:
  - {name: plain, type: openai, base_url: %q, model: m, timeout: 1m, max_retries: 0, stream: false}
  - {name: thinking, type: openai, base_url: %q, model: m, timeout: 1m, max_retries: 0, stream: false, send_reasoning_content: true}
routes:
  default: {providers: [plain, thinking], hedge_after: off}
`, plain.srv.URL+"/v1", thinking.srv.URL+"/v1"))
	srv, err := server.New(context.Background(), cfg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tenant := httptest.NewServer(srv.Handler)
	defer tenant.Close()

	const reasoning = "The user wants the weather; call get_weather for Paris."
	body := `{"model":"default","messages":[{"role":"user","content":"weather in Paris?"},
		{"role":"assistant","content":"","reasoning_content":"` + reasoning + `","tool_calls":[{"id":"call_A","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"call_A","content":"{\"temp_c\":11}"}],
		"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`
	req, _ := http.NewRequest(http.MethodPost, tenant.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tenantKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), "11C in Paris") {
		t.Fatalf("%d %s", resp.StatusCode, answer)
	}
	for _, c := range []struct {
		name string
		llm  *capturedLLM
		want string
	}{{"plain (no send_reasoning_content)", plain, ""}, {"thinking (send_reasoning_content)", thinking, reasoning}} {
		sent := c.llm.requests()
		if len(sent) != 1 || len(sent[0]) != 3 {
			t.Fatalf("%s: requests %v, want one of 3 messages", c.name, sent)
		}
		got, ok := sent[0][1]["reasoning_content"]
		if c.want == "" && ok || c.want != "" && got != c.want {
			t.Errorf("%s: the assistant turn was sent with reasoning_content %v (present %v), want %q: %v", c.name, got, ok, c.want, sent[0][1])
		}
		for _, i := range []int{0, 2} {
			if _, ok := sent[0][i]["reasoning_content"]; ok {
				t.Errorf("%s: messages[%d] sent with reasoning_content: %v", c.name, i, sent[0][i])
			}
		}
	}
}
