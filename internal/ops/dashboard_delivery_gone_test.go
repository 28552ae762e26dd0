package ops_test

import (
	"context"
	"html"
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

// A delivery answered 410 Gone is abandoned at that try, and its last error
// says so after the status (webhook.GoneNote: the event will not be sent
// again, fix or remove the owner's webhook URL). The dashboard shows that
// note as it shows a redirect's, a router note and not the receiver's
// answer; only the quoted answer is left out, "(answer not shown)". It
// showed "the webhook answered 410 (answer not shown)", the note hidden.
func TestDashboardDeliveryShowsGoneNote(t *testing.T) {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusGone)
		_, _ = w.Write(append([]byte(`{"error":"gone","got":`), body...))
	}))
	t.Cleanup(receiver.Close)
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": receiver.URL}); err != nil {
		t.Fatal(err)
	}
	// A real try of the webhook worker, answered 410 with the payload
	// echoed (the job's idempotency key "Jane Doe" in it).
	ev := failedDelivery(t, db, "Jane Doe", "")
	w := webhook.NewWorker(db.Store, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
	_ = w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000},
		Args: webhook.DeliverArgs{EventID: ev}})
	var stored, status string
	if err := db.Pool.QueryRow(ctx, `SELECT coalesce(last_error, ''), status FROM job_events WHERE id = $1`, ev).Scan(&stored, &status); err != nil {
		t.Fatal(err)
	}
	noted := webhook.AnsweredPrefix + "410" + webhook.GoneNote
	if status != store.EventAbandoned || !strings.HasPrefix(stored, noted+": ") || !strings.Contains(stored, "Jane Doe") {
		t.Fatalf("the 410 try stored %s %q, want abandoned with %q and the quoted answer: the test shows nothing", status, stored, noted)
	}

	// The texts a 410 try stores: with the start of the answer, and with
	// an empty answer. Shown as the dashboard lists a failing delivery.
	tries := []struct{ stored, shown string }{
		{stored, noted + " (answer not shown)"},
		{noted, noted},
	}
	var events []string
	for i, c := range tries {
		events = append(events, failedDelivery(t, db, "gone-"+string(rune('a'+i)), c.stored))
	}
	page := dashboardOf(t, db)
	if i := strings.Index(page, "Jane"); i >= 0 {
		t.Errorf("the dashboard shows a webhook answer's body: ...%s...", page[max(i-200, 0):min(i+60, len(page))])
	}
	for i, c := range tries {
		at := strings.Index(page, `data-event="`+events[i]+`"`)
		if at < 0 {
			t.Fatalf("delivery %s is not on the page", events[i])
		}
		line := page[at:]
		line = line[:strings.Index(line, "</div>")]
		if want := `<span class="why">` + html.EscapeString(c.shown) + `</span>`; !strings.Contains(line, want) {
			t.Errorf("delivery %q: want %q on the page:\n%s", c.stored, want, line)
		}
	}
}
