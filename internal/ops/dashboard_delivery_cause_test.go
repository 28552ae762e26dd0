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

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// A failing delivery's last error quotes the start of the receiver's answer
// (up to 256 bytes), and receivers often echo the payload — the job and its
// result — which docs/operations.md says the dashboard never shows. The page
// shows the answer's status only; the owner reads the whole error from GET
// /v1/jobs/{id}/events. Errors in the router's own words are shown whole.
// Found by review.
func TestDashboardDeliveryShowsNoAnswerBody(t *testing.T) {
	// A receiver that refuses the payload and echoes it back, as many do.
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write(append([]byte(`{"error":"cannot process","got":`), body...))
	}))
	t.Cleanup(receiver.Close)
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": receiver.URL}); err != nil {
		t.Fatal(err)
	}
	// A real try of the webhook worker, of a job whose payload says
	// "Jane Doe" (its idempotency key, which the event's job carries).
	echoed := failedDelivery(t, db, "Jane Doe", "")
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	w := webhook.NewWorker(db.Store, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
	if err := w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000},
		Args: webhook.DeliverArgs{EventID: echoed}}); err == nil {
		t.Fatal("a try answered 422 returned no error")
	}
	var stored string
	if err := db.Pool.QueryRow(ctx, `SELECT coalesce(last_error, '') FROM job_events WHERE id = $1`, echoed).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored, "Jane Doe") {
		t.Fatalf("the stored error %q does not quote the echoed payload: the test shows nothing", stored)
	}
	const echo = `{"error":"bad","got":{"type":"job.succeeded","job":{"result":{"name":"Jane Doe 4111-1111-1111-1111"}}}}`
	// The texts the webhook package stores (internal/webhook's send,
	// sendError, cutShort).
	tries := []struct{ stored, shown string }{
		{"the webhook answered 500: " + echo, "the webhook answered 500 (answer not shown)"},
		{"the webhook answered 307 (a redirect, not followed: set the webhook URL to its target): Moved to Jane Doe",
			"the webhook answered 307 (a redirect, not followed: set the webhook URL to its target) (answer not shown)"},
		{"the webhook answered 503", "the webhook answered 503"},
		{"send: dial: connect: connection refused", "send: dial: connect: connection refused"},
		{"no answer within 10s", "no answer within 10s"},
	}
	var events []string
	for i, c := range tries {
		events = append(events, failedDelivery(t, db, "k"+string(rune('a'+i)), c.stored))
	}
	page := dashboardOf(t, db)
	tries = append(tries, struct{ stored, shown string }{stored, "the webhook answered 422 (answer not shown)"})
	events = append(events, echoed)
	if i := strings.Index(page, "Jane"); i >= 0 {
		t.Errorf("the dashboard shows a webhook answer's body: ...%s...", page[max(i-200, 0):min(i+60, len(page))])
	}
	for i, c := range tries {
		line := page[strings.Index(page, `data-event="`+events[i]+`"`):]
		line = line[:strings.Index(line, "</div>")]
		if want := `<span class="why">` + c.shown + `</span>`; !strings.Contains(line, want) {
			t.Errorf("delivery %q: want %q on the page:\n%s", c.stored, want, line)
		}
	}
}

// failedDelivery is failingDelivery with a try that failed with lastError;
// with lastError "", no try is recorded.
func failedDelivery(t *testing.T, db *testdb.DB, key, lastError string) string {
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
	if lastError == "" {
		return ev
	}
	if _, err := db.Store.RecordDelivery(ctx, store.DeliveryTry{EventID: ev, Try: 1, URL: "https://hooks.example.com/x",
		StartedAt: time.Now(), StatusCode: 500, Error: lastError, Status: store.EventPending}); err != nil {
		t.Fatal(err)
	}
	return ev
}
