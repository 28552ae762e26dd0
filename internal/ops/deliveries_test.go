package ops_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
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
	input := json.RawMessage(`{"a":1}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "op", IdempotencyKey: "k1", Fingerprint: fp, Route: "default", Input: input})
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
	srv := httptest.NewServer(ops.New(ops.Config{}, db.Store, nil, nil))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`id="deliveries"`, "1 pending", "1 failing", `data-event="` + ev + `"`, "the webhook answered 503"} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("dashboard lacks %q:\n%s", want, body)
		}
	}
}
