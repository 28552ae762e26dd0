package ops_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The dashboard shows pending and failing webhook deliveries.
func TestDashboardShowsFailingDeliveries(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
	ev := failingDelivery(t, db, "k1")
	body := dashboardOf(t, db)
	for _, want := range []string{`id="deliveries"`, "1 pending", "1 failing", `data-event="` + ev + `"`, "the webhook answered 503"} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("dashboard lacks %q:\n%s", want, body)
		}
	}
}

// failingDelivery makes a job of acme (an owner with a webhook) under key,
// cancels it, and records a failed try of its event (503, still pending); it
// returns the event's id.
func failingDelivery(t *testing.T, db *testdb.DB, key string) string {
	t.Helper()
	ctx := context.Background()
	input := json.RawMessage(`{"a":1}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "op", IdempotencyKey: key, Fingerprint: fp, Route: "default", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Store.CancelJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	var ev string
	if err := db.Pool.QueryRow(ctx, `SELECT id::text FROM job_events WHERE job_id = $1`, j.ID).Scan(&ev); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Store.RecordDelivery(ctx, store.DeliveryTry{EventID: ev, Try: 1, URL: "https://hooks.example.com/x",
		StartedAt: time.Now(), StatusCode: 503, Error: "the webhook answered 503", Status: store.EventPending}); err != nil {
		t.Fatal(err)
	}
	return ev
}

// dashboardOf is the dashboard page of db's store.
func dashboardOf(t *testing.T, db *testdb.DB) string {
	t.Helper()
	srv := httptest.NewServer(ops.New(ops.Config{}, db.Store, nil, nil))
	defer srv.Close()
	return getPage(t, srv.URL+"/dashboard")
}
