package webhook_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// A try cut short by the service stopping is recorded as such, not as the
// endpoint's timeout, and counts against nothing: the event, older than the
// retry window, stays pending (a failed try that old gives up), River has its
// job available again with the attempt not counted, and the next client
// delivers it.
func TestShutdownInterruptsATryWithoutCountingIt(t *testing.T) {
	rc := newReceiver(t, func(n int) int {
		if n == 1 {
			return 0 // hang until the sender gives up
		}
		return http.StatusOK
	})
	e := setup(t, rc.srv.URL, webhook.MaxTimeout) // the try does not time out of itself while the test runs
	ctx := context.Background()
	j := e.cancel(t, "acme", "k1")
	if _, err := e.db.Pool.Exec(ctx, `UPDATE job_events SET created_at = now() - interval '25 hours' WHERE job_id = $1`, j.ID); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	rc.next(t) // the try is in flight
	stopCtx, cancel := context.WithCancel(ctx)
	cancel() // no grace: the try in flight is cancelled
	_ = e.svc.Stop(stopCtx)

	ev := e.waitStatus(t, "acme", j.ID, store.EventPending, 1)
	const want = "delivery interrupted by router shutdown; will be retried"
	if d := ev.Deliveries[0]; d.Error == nil || *d.Error != want || d.StatusCode != nil {
		t.Fatalf("the interrupted try: %+v, want error %q", d, want)
	}
	var state string
	var attempt, errs int
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := e.db.Pool.QueryRow(ctx, `SELECT state::text, attempt, coalesce(array_length(errors, 1), 0) FROM river_job
			WHERE kind = 'webhook_delivery' AND args->>'event_id' = $1`, ev.ID).Scan(&state, &attempt, &errs); err != nil {
			t.Fatal(err)
		}
		if state != "running" || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if state != "available" || attempt != 0 || errs != 0 {
		t.Fatalf("River's job after the interrupted try: state %s, attempt %d, %d errors; want available, 0, 0", state, attempt, errs)
	}

	second := newService(t, e.db, 5*time.Second)
	if err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Stop(context.Background()) })
	verified(t, rc.next(t))
	e.waitStatus(t, "acme", j.ID, store.EventDelivered, 2)
}
