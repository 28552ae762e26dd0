package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// A replica without the signing secret of a configured webhook (its
// environment lacks the variable, during a rolling update say) fails its try
// and leaves the event to be retried, by another replica or by itself once
// restarted with the variable: it used to abandon the event for good.
func TestAReplicaWithoutTheSecretLeavesTheEventToBeRetried(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	ctx := context.Background()
	j := e.cancel(t, "acme", "k1")
	id := e.events(t, "acme", j.ID)[0].ID

	w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second}) // no secrets
	err := w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000}, Args: webhook.DeliverArgs{EventID: id}})
	var cancelled *rivertype.JobCancelError
	if err == nil || errors.As(err, &cancelled) {
		t.Fatalf("the try without a secret returned %v, want an error River retries", err)
	}
	ev := e.waitStatus(t, "acme", j.ID, store.EventPending, 1)
	if d := ev.Deliveries[0]; d.Error == nil || !strings.Contains(*d.Error, "secret_env") || d.StatusCode != nil {
		t.Fatalf("the try without a secret: %+v", d)
	}
	select {
	case r := <-rc.got:
		t.Fatalf("sent %s without a secret", r.body)
	default:
	}

	e.start(t) // a replica with the secret
	verified(t, rc.next(t))
	e.waitStatus(t, "acme", j.ID, store.EventDelivered, 2)
}

// The retry window is a time: an event whose River job has used up its
// max_attempts (a short webhooks.backoff_cap gets through the outbox's 10,000
// in hours) is still retried, where River discarded it and left the event
// pending with nothing to deliver it.
func TestRetriesOutlastRiversMaxAttempts(t *testing.T) {
	rc := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	e := setup(t, rc.srv.URL, 5*time.Second)
	j := e.cancel(t, "acme", "k1")
	if _, err := e.db.Pool.Exec(context.Background(), `UPDATE river_job SET max_attempts = 1 WHERE kind = 'webhook_delivery'`); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	ev := e.waitStatus(t, "acme", j.ID, store.EventDelivered, 2)
	if d := ev.Deliveries[0]; d.StatusCode == nil || *d.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("try 1: %+v", d)
	}
}
