package api_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// A chat job's first round sends the caller's response_format schema and
// tools as the caller wrote them (the handler's own bytes), but every later
// run — POST /v1/jobs/{id}/retry, which the chat 502/400 answers name as the
// way out, a job adopted by another replica after a lease loss, a resume
// after a restart — decodes the job's input as PostgreSQL's jsonb gives it
// back, whose object keys are sorted (shorter names first). OpenAI's
// structured outputs produce the answer's keys in the schema's order, and a
// chain-of-thought schema ("reasoning" before "answer") becomes one that
// answers first: the same job, a different request to the provider, a
// different answer shape. docs/operations.md: "Anthropic receives the output
// and tool schemas as written (exact numbers, key order)".
func TestChatRetrySendsSchemaInCallersKeyOrder(t *testing.T) {
	var (
		mu      sync.Mutex
		schemas []string
		tools   []string
	)
	b := setup(t, options{respond: func(call int, req *providers.Request) providers.Step {
		mu.Lock()
		if req.ResponseFormat != nil {
			schemas = append(schemas, string(req.ResponseFormat.Schema))
		}
		tools = append(tools, string(req.Tools))
		mu.Unlock()
		if call == 1 {
			return providers.Step{Status: http.StatusBadRequest}
		}
		return providers.Step{Output: `{"reasoning":"it is sunny in Paris","answer":"yes"}`}
	}})
	body := `{"model":"default","messages":[{"role":"user","content":"Is it sunny in Paris? Think first."}],` +
		`"tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object","properties":{"reasoning":{"type":"string"},"city":{"type":"string"}}}}}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"cot","strict":true,"schema":{"type":"object",` +
		`"properties":{"reasoning":{"type":"string"},"answer":{"type":"string"}},"required":["reasoning","answer"],"additionalProperties":false}}}}`
	r := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "cot-order")
	id := r.header.Get("X-Router-Job-Id")
	if r.status != http.StatusBadRequest || id == "" {
		t.Fatalf("first call: %d %s; want the provider's 400 with the job's id", r.status, r.raw)
	}
	if rr := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/retry", acmeKey, ""); rr.status/100 != 2 {
		t.Fatalf("retry: %d %s", rr.status, rr.raw)
	}
	deadline := time.Now().Add(20 * time.Second)
	var again reply
	for {
		again = b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "cot-order")
		if again.status == http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if again.status != http.StatusOK {
		t.Fatalf("resend after the retry: %d %s", again.status, again.raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(schemas) < 2 {
		t.Fatalf("the provider was asked %d times; want 2", len(schemas))
	}
	first, last := schemas[0], schemas[len(schemas)-1]
	t.Logf("schema sent by the first round: %s", first)
	t.Logf("schema sent by the retry:       %s", last)
	t.Logf("tools sent by the first round:  %s", tools[0])
	t.Logf("tools sent by the retry:        %s", tools[len(tools)-1])
	before := func(s, a, b string) bool { return strings.Index(s, `"`+a+`"`) < strings.Index(s, `"`+b+`"`) }
	if !before(first, "reasoning", "answer") {
		t.Fatalf("the first round already reordered the schema: %s", first)
	}
	if first != last || !before(last, "reasoning", "answer") || !before(tools[len(tools)-1], "reasoning", "city") {
		t.Fatalf("the retried job sends the provider another schema than its first round: the caller's key order "+
			"(\"reasoning\" before \"answer\") is lost, jsonb's sorted order sent instead:\nfirst: %s\nretry: %s", first, last)
	}
}
