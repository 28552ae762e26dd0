package ops

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The dashboard's ages ("since 5m ago") compared a row's timestamp, on the
// database's clock, with this router's clock: a router whose clock was ahead
// of the database host's showed every breaker changed hours ago, one behind
// showed it "just now" (a negative age). Every age on the page is now
// measured from the database's clock, read with the page. The router's clock
// is skewed here by three hours either way; the breaker's state change, the
// conformance run, the job and its failing delivery are dated minutes before
// the database's now().
func TestDashboardAgesAreOnTheDatabaseClock(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if err := db.Store.UpsertBreakerStates(ctx, "r1", []store.BreakerState{
		{Provider: "primary", State: "open", SinceChange: 5 * time.Minute, Changed: true},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO conformance_runs (provider, model, prompt, prompt_version,
			passed, cases_total, cases_passed, started_at, finished_at, legacy)
		VALUES ('primary', 'm', 'triage', '2', true, 1, 1, now() - interval '9 minutes', now() - interval '9 minutes', true)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
	failingJobDelivery(t, db)
	if _, err := db.Pool.Exec(ctx, `UPDATE jobs SET created_at = now() - interval '7 minutes'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE job_events SET created_at = now() - interval '3 minutes'`); err != nil {
		t.Fatal(err)
	}

	for _, skew := range []time.Duration{3 * time.Hour, -3 * time.Hour} {
		s := New(Config{Providers: []string{"primary"}, Conformance: StoreConformance{Store: db.Store, MaxAge: time.Hour}},
			db.Store, nil, nil)
		s.now = func() time.Time { return time.Now().Add(skew) }
		srv := httptest.NewServer(s)
		res, err := srv.Client().Get(srv.URL + "/dashboard")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		var wrong []string
		for what, want := range map[string]string{
			"the breaker's state change":   "since 5m ago",
			"the conformance run":          `<span class="why">9m ago</span>`,
			"the job's creation":           "· 7m ago ·",
			"the failing delivery's event": "· since 3m ago</span>",
		} {
			if !strings.Contains(page, want) {
				wrong = append(wrong, fmt.Sprintf("%s not as %q", what, want))
			}
		}
		if len(wrong) > 0 {
			t.Errorf("router clock %v off the database's: the dashboard shows %s (their ages on the database clock):\n%s",
				skew, strings.Join(wrong, ", "), page[max(strings.Index(page, "<body"), 0):])
		}
	}
}

// failingJobDelivery makes a job of acme (an owner with a webhook), cancels
// it, and records a failed try of its event (503, still pending).
func failingJobDelivery(t *testing.T, db *testdb.DB) {
	t.Helper()
	ctx := context.Background()
	input := []byte(`{"a":1}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "op", IdempotencyKey: "k", Fingerprint: fp, Route: "default", Input: input})
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
}
