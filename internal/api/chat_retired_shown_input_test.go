package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// A chat job's input stores the caller's schema as its text, and every
// reader of a job is to show it as an object (chat.ShownInput, via
// race.AppendJob). GET /v1/jobs/{id} of a failed chat job whose route this
// deployment no longer configures (rollout over) writes the job with this
// replica's next_step (appendJob with a step), which bypasses race.AppendJob:
// the caller sees the schema as a JSON string.
func TestRetiredChatJobShowsSchemaAsObject(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }})
	ctx := context.Background()
	r := b.do(t, http.MethodPost, chatPath, acmeKey, storedIntentBody, "Idempotency-Key", "retired-shown")
	id := r.header.Get("X-Router-Job-Id")
	if id == "" {
		t.Fatalf("chat: %d %s", r.status, r.raw)
	}
	var state string
	for i := 0; i < 200; i++ {
		if err := b.db.Pool.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, id).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state == "failed" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if state != "failed" {
		t.Fatalf("premise: job %s is %s, want failed", id, state)
	}
	show := func(what string) string {
		g := b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")
		var job struct {
			Input struct {
				ResponseFormat struct {
					JSONSchema struct {
						Schema json.RawMessage `json:"schema"`
					} `json:"json_schema"`
				} `json:"response_format"`
			} `json:"input"`
			NextStep string `json:"next_step"`
		}
		if err := json.Unmarshal(g.raw, &job); err != nil || g.status != http.StatusOK {
			t.Fatalf("GET: %d %s (%v)", g.status, g.raw, err)
		}
		t.Logf("%s: next_step %q", what, job.NextStep)
		return string(job.Input.ResponseFormat.JSONSchema.Schema)
	}
	if s := show("configured route"); !strings.HasPrefix(s, "{") {
		t.Fatalf("premise: the schema of a failed chat job is shown as %s", s)
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET route = 'gone', created_at = now() - interval '2 hours' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	api.SetStarted(b.api, time.Now().Add(-time.Hour))
	if s := show("retired route"); !strings.HasPrefix(s, "{") {
		t.Errorf("GET /v1/jobs/{id} of a failed chat job on a retired route shows the schema as %s; want the object", s)
	}
	l := b.do(t, http.MethodGet, "/v1/jobs?limit=10", acmeKey, "")
	if strings.Contains(string(l.raw), `"schema":"{`) {
		t.Errorf("GET /v1/jobs lists the retired chat job's schema as a string:\n%s", l.raw)
	}
}
