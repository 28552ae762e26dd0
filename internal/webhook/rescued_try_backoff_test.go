package webhook_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// docs/lifecycle.md: "A try in flight when its replica is killed stays
// `running` in River until River's rescuer (every 30 s, on River's leader)
// sees it older than 5 minutes …; then it is retried, so such an event
// arrives up to about 5½ minutes late, never lost." The rescuer schedules the
// rescued job with the client's retry policy (Backoff.NextRetry) at the
// job's attempt count, as if the killed try had been the endpoint's failure:
// an event on its 10th try (its endpoint failed 9 times before, then came
// back) whose replica is killed mid-try waits Delay(10), 21 to 43 minutes
// with the default 5s base, on top of the rescue — up to webhooks.backoff_cap
// (1 h) for later tries — though the endpoint did not fail. A try cut by a
// graceful shutdown is retried at once and "does not lengthen the backoff"
// (docs/api.md).
func TestRescuedTryIsRetriedSoonNotAfterAFullBackoff(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusNoContent })
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	ctx := context.Background()
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": rc.srv.URL}); err != nil {
		t.Fatal(err)
	}
	// The configuration's defaults: 5s doubling to 1h.
	svc := newServiceOf(t, db, webhook.ServiceConfig{
		Config:  webhook.Config{Timeout: time.Second, Secrets: map[string]string{"acme": secret}},
		Backoff: webhook.Backoff{Base: 5 * time.Second, Cap: time.Hour},
	})
	e := &env{db: db, st: db.Store, svc: svc}
	j := e.cancel(t, "acme", "k1")
	// A replica was killed six minutes ago in the middle of the event's 10th
	// River attempt: its River job is left running, its send lease long
	// expired. (What the dead replica would have left; its earlier 9 failed
	// tries are River's attempt count.)
	if _, err := db.Pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 10,
			attempted_at = now() - interval '6 minutes', attempted_by = ARRAY['killed-replica']
		WHERE kind = 'webhook_delivery'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE job_events SET sender = 'killed-try', sending_until = now() - interval '5 minutes'`); err != nil {
		t.Fatal(err)
	}
	e.start(t) // River's leader: its rescuer runs at once
	// The rescue happens within seconds; the docs' bound leaves about 30 s.
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		if evs := e.events(t, "acme", j.ID); len(evs) == 1 && evs[0].Status == store.EventDelivered {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	var state string
	var due time.Duration
	if err := db.Pool.QueryRow(ctx, `SELECT state::text, scheduled_at - now() FROM river_job WHERE kind = 'webhook_delivery'`).Scan(&state, &due); err != nil {
		t.Fatal(err)
	}
	t.Errorf("the event of a try killed 6 minutes ago was not delivered within 45s of the rescue: its River job is %s, due in %s "+
		"(the rescue drew a failed try's backoff at attempt 10; docs/lifecycle.md says such an event arrives up to about 5½ minutes late)",
		state, due.Round(time.Second))
}
