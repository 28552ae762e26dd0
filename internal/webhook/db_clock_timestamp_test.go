package webhook_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/webhook"
)

// A try's webhook-timestamp (which the signature covers) and its recorded
// start are the database's time, not the worker's: a replica whose clock is
// hours off still sends a timestamp a receiver with the right time accepts.
// The database's now(), read before the try and after it, brackets both;
// nothing else bounds them.
func TestWebhookTimestampIsOnTheDatabaseClock(t *testing.T) {
	for _, skew := range []time.Duration{3 * time.Hour, -3 * time.Hour} {
		t.Run("worker clock "+skew.String(), func(t *testing.T) {
			rc := newReceiver(t, func(int) int { return http.StatusNoContent })
			e := setup(t, rc.srv.URL, 5*time.Second)
			ctx := context.Background()
			j := e.cancel(t, "acme", "k1")
			evs := e.events(t, "acme", j.ID)
			if len(evs) != 1 {
				t.Fatalf("%d events, want 1", len(evs))
			}
			w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret},
				Now: func() time.Time { return time.Now().Add(skew) }})
			var before, after time.Time
			if err := e.db.Pool.QueryRow(ctx, `SELECT now()`).Scan(&before); err != nil {
				t.Fatal(err)
			}
			err := w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{},
				Args: webhook.DeliverArgs{EventID: evs[0].ID, Owner: "acme"}})
			if err != nil {
				t.Fatalf("the try: %v", err)
			}
			if err := e.db.Pool.QueryRow(ctx, `SELECT now()`).Scan(&after); err != nil {
				t.Fatal(err)
			}
			d := rc.next(t)
			sec, err := strconv.ParseInt(d.header.Get(webhook.HeaderTimestamp), 10, 64)
			if err != nil {
				t.Fatalf("webhook-timestamp %q: %v", d.header.Get(webhook.HeaderTimestamp), err)
			}
			// Unix seconds, rounded down: the bracket's seconds, rounded down too.
			if sec < before.Unix() || sec > after.Unix() {
				t.Errorf("webhook-timestamp %s, want the database's time, between %s and %s (the worker's clock is %s off)",
					time.Unix(sec, 0).UTC(), before.UTC(), after.UTC(), skew)
			}
			if err := webhook.Verify(secret, d.header, d.body, time.Unix(sec, 0), 0); err != nil {
				t.Errorf("the signature does not cover the webhook-timestamp sent: %v", err)
			}
			ev := e.events(t, "acme", j.ID)[0]
			if len(ev.Deliveries) != 1 {
				t.Fatalf("%d recorded tries, want 1", len(ev.Deliveries))
			}
			if s := ev.Deliveries[0].StartedAt; s.Before(before) || s.After(after) {
				t.Errorf("the try's started_at %s, want the database's time, between %s and %s", s.UTC(), before.UTC(), after.UTC())
			}
		})
	}
}
