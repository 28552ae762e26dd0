package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/webhook"
)

// Giving up on an event is decided on the database clock: the event's age is
// now() - created_at as PostgreSQL sees it, whatever the worker's clock says.
// One try each against an endpoint that always answers 500, with the worker's
// clock skewed the other way from the event's age.
func TestGiveUpIsDecidedOnTheDatabaseClock(t *testing.T) {
	const retryFor = 24 * time.Hour
	cases := []struct {
		name      string
		dbAge     string                            // the event's age on the database clock
		workerNow func(created time.Time) time.Time // the worker's clock
		want      string                            // the event's status after the try
	}{
		{"old on the database, young on the worker", "25 hours",
			func(created time.Time) time.Time { return created.Add(time.Minute) }, "abandoned"},
		{"young on the database, old on the worker", "1 minute",
			func(created time.Time) time.Time { return created.Add(48 * time.Hour) }, "pending"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := newReceiver(t, func(int) int { return http.StatusInternalServerError })
			e := setup(t, rc.srv.URL, 5*time.Second)
			ctx := context.Background()
			j := e.cancel(t, "acme", "k1")
			var id string
			var created time.Time
			if err := e.db.Pool.QueryRow(ctx, `UPDATE job_events SET created_at = now() - $2::interval
				WHERE job_id = $1 RETURNING id::text, created_at`, j.ID, c.dbAge).Scan(&id, &created); err != nil {
				t.Fatal(err)
			}
			w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, RetryFor: retryFor,
				Secrets: map[string]string{"acme": secret}, Now: func() time.Time { return c.workerNow(created) }})
			err := w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{}, Args: webhook.DeliverArgs{EventID: id}})
			var cancelled *rivertype.JobCancelError
			switch {
			case err == nil:
				t.Fatal("a try the endpoint answered 500 returned no error")
			case c.want == "abandoned" && !errors.As(err, &cancelled):
				t.Fatalf("the try returned %v, want river.JobCancel (give up)", err)
			case c.want == "pending" && errors.As(err, &cancelled):
				t.Fatalf("the try gave up (%v), want a retry", err)
			}
			ev := e.waitStatus(t, "acme", j.ID, c.want, 1)
			if d := ev.Deliveries[0]; d.StatusCode == nil || *d.StatusCode != 500 {
				t.Fatalf("the recorded try: %+v", d)
			}
		})
	}
}
