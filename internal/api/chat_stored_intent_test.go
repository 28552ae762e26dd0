package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
)

const storedIntentBody = `{"model":"default","messages":[{"role":"user","content":"Is it sunny? Think first."}],` +
	`"response_format":{"type":"json_schema","json_schema":{"name":"cot","schema":{"type":"object",` +
	`"properties":{"reasoning":{"type":"string"},"answer":{"type":"string"}},"required":["reasoning","answer"]}}}}`

// A chat job's input holds the caller's schema as an object (what replicas
// of the previous version read) and its text beside it (so every round
// sends its bytes), and GET /v1/jobs/{id} shows it as an object, in the
// caller's key order, without that text.
func TestChatJobInputShowsSchemaAsObject(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: `{"reasoning":"r","answer":"a"}`}
	}})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, storedIntentBody, "Idempotency-Key", "shown-1")
	id := r.header.Get("X-Router-Job-Id")
	if r.status != http.StatusOK || id == "" {
		t.Fatalf("chat: %d %s", r.status, r.raw)
	}
	var object, text string
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT jsonb_typeof(input->'response_format'->'json_schema'->'schema'),
		coalesce(jsonb_typeof(input->'verbatim'->'schema'), 'none') FROM jobs WHERE id = $1`, id).Scan(&object, &text); err != nil {
		t.Fatal(err)
	}
	if object != "object" || text != "string" {
		t.Fatalf("the stored schema is a jsonb %s, its verbatim text a %s; want an object and its text (a string, whose bytes jsonb keeps)", object, text)
	}
	g := b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")
	var job struct {
		Input struct {
			ResponseFormat struct {
				JSONSchema struct {
					Schema json.RawMessage `json:"schema"`
				} `json:"json_schema"`
			} `json:"response_format"`
		} `json:"input"`
	}
	if err := json.Unmarshal(g.raw, &job); err != nil || g.status != http.StatusOK {
		t.Fatalf("GET: %d %s (%v)", g.status, g.raw, err)
	}
	s := string(job.Input.ResponseFormat.JSONSchema.Schema)
	if !strings.HasPrefix(s, "{") || strings.Index(s, `"reasoning"`) > strings.Index(s, `"answer"`) {
		t.Fatalf("GET /v1/jobs/{id} shows the schema as %s; want the object in the caller's order", s)
	}
}

// A chat job stored in the object form by a replica before the stored form
// still runs: a retry of it reads its row.
func TestChatJobStoredInObjectFormStillRuns(t *testing.T) {
	var (
		mu      sync.Mutex
		schemas []string
	)
	b := setup(t, options{respond: func(call int, req *providers.Request) providers.Step {
		mu.Lock()
		if req.ResponseFormat != nil {
			schemas = append(schemas, string(req.ResponseFormat.Schema))
		}
		mu.Unlock()
		if call == 1 {
			return providers.Step{Status: http.StatusBadRequest}
		}
		return providers.Step{Output: `{"reasoning":"r","answer":"a"}`}
	}})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, storedIntentBody, "Idempotency-Key", "old-row")
	id := r.header.Get("X-Router-Job-Id")
	if r.status != http.StatusBadRequest || id == "" {
		t.Fatalf("first call: %d %s", r.status, r.raw)
	}
	var req chat.Request
	if err := json.Unmarshal([]byte(storedIntentBody), &req); err != nil {
		t.Fatal(err)
	}
	in, err := req.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	object, _ := json.Marshal(in) // as replicas before the stored form stored it
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET input = $2::jsonb WHERE id = $1`, id, string(object)); err != nil {
		t.Fatal(err)
	}
	if rr := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/retry", acmeKey, ""); rr.status/100 != 2 {
		t.Fatalf("retry: %d %s", rr.status, rr.raw)
	}
	// The resend attaches to the new round and waits for it (chat.wait).
	again := b.do(t, http.MethodPost, chatPath, acmeKey, storedIntentBody, "Idempotency-Key", "old-row")
	if again.status != http.StatusOK || again.header.Get("X-Router-Job-Id") != id {
		t.Fatalf("resend after the retry of the old row: %d %s", again.status, again.raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(schemas) != 2 || !strings.Contains(schemas[1], `"reasoning"`) || !strings.HasPrefix(schemas[1], "{") {
		t.Fatalf("the provider was sent %q; want the old row's schema (an object) on the retry", schemas)
	}
}
