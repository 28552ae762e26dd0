package ops_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// A real try answered 410 abandons its event at once: the event will never be
// sent again. The dashboard renders webhook.GoneNote for such a try
// (deliveryCause, TestDashboardDeliveryShowsGoneNote), but it lists only
// pending events, so an event the worker actually abandoned never appears:
// the page says "no failing deliveries" right after a permanent loss. The
// GoneNote rendering is reachable only with a hand-made pending row.
func TestDashboardShowsAnEventAbandonedBy410(t *testing.T) {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusGone)
	}))
	t.Cleanup(receiver.Close)
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": receiver.URL}); err != nil {
		t.Fatal(err)
	}
	ev := failedDelivery(t, db, "gone-real", "")
	w := webhook.NewWorker(db.Store, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
	_ = w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000},
		Args: webhook.DeliverArgs{EventID: ev}})
	var status string
	if err := db.Pool.QueryRow(ctx, `SELECT status FROM job_events WHERE id = $1`, ev).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if status != store.EventAbandoned {
		t.Fatalf("the 410 try left the event %s, want abandoned", status)
	}
	page := dashboardOf(t, db)
	if !strings.Contains(page, `data-event="`+ev+`"`) {
		i := strings.Index(page, `id="deliveries"`)
		t.Errorf("event %s was just abandoned (410 Gone: never sent again), but the dashboard does not show it:\n%s",
			ev, page[i:min(i+400, len(page))])
	}
}

// abandonedDelivery makes a job of acme under key, cancels it, records a try
// of its event that gives up on it (a 500 when it was webhooks.retry_for old),
// and dates its abandonment ago before the database's now; it returns the
// event's id.
func abandonedDelivery(t *testing.T, db *testdb.DB, key string, ago time.Duration) string {
	t.Helper()
	ctx := context.Background()
	ev := failedDelivery(t, db, key, "")
	if _, err := db.Store.RecordDelivery(ctx, store.DeliveryTry{EventID: ev, Try: 1, URL: "https://hooks.example.com/x",
		StartedAt: time.Now(), StatusCode: 500, Error: webhook.AnsweredPrefix + "500", Status: store.EventAbandoned}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE job_events SET abandoned_at = now() - $2::interval WHERE id = $1`, ev, ago); err != nil {
		t.Fatal(err)
	}
	return ev
}

// The events abandoned in the last day are listed newest first, at most 20,
// with how many there were; older ones are not. An event given up on for its
// age says so, with its last try's cause: its last error is only that try's.
func TestDashboardListsTheEventsAbandonedInTheLastDay(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
	old := abandonedDelivery(t, db, "old", 25*time.Hour)
	var recent []string // newest first
	for i := range 22 {
		recent = append(recent, abandonedDelivery(t, db, fmt.Sprintf("k%d", i), time.Duration(i+1)*time.Minute))
	}
	page := dashboardOf(t, db)
	i := strings.Index(page, `id="deliveries"`)
	section := page[i : i+strings.Index(page[i:], "</section>")]
	if want := "22 in the last 24 h (the newest 20 shown)"; !strings.Contains(section, want) {
		t.Errorf("22 events abandoned in the last day (and one a day before): want %q in the section:\n%s", want, section)
	}
	if strings.Contains(section, old) {
		t.Errorf("event %s, abandoned 25 hours ago, is listed among those of the last day:\n%s", old, section)
	}
	at := -1
	for n, ev := range recent {
		k := strings.Index(section, `data-event="`+ev+`"`)
		switch {
		case n >= 20 && k >= 0:
			t.Errorf("the %dth newest abandoned event is listed: only the newest 20 should be", n+1)
		case n < 20 && k < 0:
			t.Errorf("the %dth newest abandoned event %s is not listed:\n%s", n+1, ev, section)
		case n < 20 && k < at:
			t.Errorf("the %dth newest abandoned event is listed before a newer one: want newest first", n+1)
		}
		at = max(at, k)
	}
	line := section[strings.Index(section, `data-event="`+recent[0]+`"`):]
	line = line[:strings.Index(line, "</div>")]
	for _, want := range []string{"owner acme", "1 tries", "abandoned 1m ago",
		`<span class="why">given up: the event was webhooks.retry_for old; its last try: ` + webhook.AnsweredPrefix + `500</span>`} {
		if !strings.Contains(line, html.EscapeString(want)) && !strings.Contains(line, want) {
			t.Errorf("the abandoned event's line lacks %q:\n%s", want, line)
		}
	}
}

// A try the router's own shutdown cut short leaves its event pending with
// "delivery interrupted by router shutdown" as its last error, after every
// rolling restart: the webhook did not fail. The dashboard shows such events
// apart, and does not count them as failing.
func TestDashboardShowsShutdownInterruptedTriesApartFromFailures(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
	failing := failedDelivery(t, db, "failing", webhook.AnsweredPrefix+"503")
	cut := failedDelivery(t, db, "cut", "delivery interrupted by router shutdown; will be retried")
	page := dashboardOf(t, db)
	i := strings.Index(page, `id="deliveries"`)
	section := page[i : i+strings.Index(page[i:], "</section>")]
	if !strings.Contains(section, "2 pending · 1 failing") {
		t.Errorf("one event failing and one whose try a shutdown cut short: want \"2 pending · 1 failing\":\n%s", section)
	}
	f, c, h := strings.Index(section, `data-event="`+failing+`"`), strings.Index(section, `data-event="`+cut+`"`), strings.Index(section, "Interrupted by a restart")
	if f < 0 || c < 0 || h < 0 || !(f < h && h < c) {
		t.Fatalf("want the failing event, then the interrupted one under \"Interrupted by a restart\":\n%s", section)
	}
	if line := section[c : c+strings.Index(section[c:], "</div>")]; strings.Contains(line, `badge failed`) {
		t.Errorf("the interrupted event is shown as failed:\n%s", line)
	}
}
