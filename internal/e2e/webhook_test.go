package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// Issue 14: a router SIGKILLed after a job's terminal transition committed but
// before its event was delivered loses nothing: the next router on the same
// database delivers it, signed. The delivery queue is paused in the database
// while the first router runs, so the kill lands exactly between the commit
// and the delivery.
func TestSIGKILLBetweenCommitAndDeliveryStillDelivers(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO river_queue (name, paused_at, updated_at) VALUES ('webhooks', now(), now())`); err != nil {
		t.Fatal(err)
	}
	type delivery struct {
		h    http.Header
		body []byte
	}
	got := make(chan delivery, 10)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Clone(), b}
	}))
	defer rc.Close()
	llm := newFakeLLM(t)

	a := startRouter(t, procOptions{dbURL: db.URL, llm: llm, webhook: rc.URL})
	r := a.do(t, "POST", "/v1/jobs", triage("webhook after crash"), "Idempotency-Key", "wh-1", "Prefer", "wait=30")
	if r.status != http.StatusCreated || r.body["state"] != "succeeded" {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	var eventID, riverState string
	err := db.Pool.QueryRow(ctx, `SELECT e.id::text, j.state::text FROM job_events e
		JOIN river_job j ON j.args->>'event_id' = e.id::text WHERE e.job_id = $1 AND e.status = 'pending'`, r.job()).Scan(&eventID, &riverState)
	if err != nil || riverState != "available" {
		t.Fatalf("the committed transition has no pending event and delivery job: state %q, %v", riverState, err)
	}
	a.kill()
	select {
	case d := <-got:
		t.Fatalf("delivered before the restart: %s", d.body)
	default:
	}

	if _, err := db.Pool.Exec(ctx, `UPDATE river_queue SET paused_at = NULL WHERE name = 'webhooks'`); err != nil {
		t.Fatal(err)
	}
	b := startRouter(t, procOptions{dbURL: db.URL, llm: llm, webhook: rc.URL})
	var d delivery
	select {
	case d = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the event was not delivered after the restart")
	}
	if err := webhook.Verify(e2eWebhookSecret, d.h, d.body, time.Now(), 5*time.Minute); err != nil {
		t.Fatalf("signature: %v", err)
	}
	var p struct {
		Type string `json:"type"`
		Job  struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"job"`
	}
	if err := json.Unmarshal(d.body, &p); err != nil || p.Type != "job.succeeded" || p.Job.ID != r.job() || d.h.Get("webhook-id") != eventID {
		t.Fatalf("delivery %s (webhook-id %s, want %s): %v", d.body, d.h.Get("webhook-id"), eventID, err)
	}
	// The try is recorded and visible to the caller.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ev := b.do(t, "GET", "/v1/jobs/"+r.job()+"/events", "")
		data, _ := ev.body["data"].([]any)
		if len(data) == 1 && data[0].(map[string]any)["status"] == "delivered" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events never showed the delivery: %s", ev.raw)
		}
		time.Sleep(20 * time.Millisecond) // polling the API: the delivery's record, written after the receiver answered, has no other sign
	}
}
