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

// An event whose owner has no webhook row is a failed try, retried until the
// event is webhooks.retry_for old on the database clock, then abandoned. Each
// replica rewrites the configured webhooks at start, so during a rolling
// update a replica restarted with the old configuration removes a webhook a
// newer one added: the owner's pending events used to be abandoned at once,
// though the next replica with the new configuration restores the webhook.
func TestEventOfAnOwnerWithoutWebhookIsRetriedUntilRetryFor(t *testing.T) {
	const retryFor = 24 * time.Hour
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	ctx := context.Background()
	young := e.cancel(t, "acme", "young")
	old := e.cancel(t, "acme", "old")
	if _, err := e.db.Pool.Exec(ctx, `UPDATE job_events SET created_at = now() - interval '25 hours' WHERE job_id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	// A replica with an older configuration, without acme's webhook, starts.
	if err := e.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, RetryFor: retryFor,
		Secrets: map[string]string{"acme": secret}})
	try := func(j *store.Job) error {
		t.Helper()
		id := e.events(t, "acme", j.ID)[0].ID
		return w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000},
			Args: webhook.DeliverArgs{EventID: id}})
	}
	var cancelled *rivertype.JobCancelError

	err := try(young)
	if err == nil || errors.As(err, &cancelled) {
		t.Fatalf("the young event's try returned %v, want an error River retries", err)
	}
	ev := e.waitStatus(t, "acme", young.ID, store.EventPending, 1)
	if d := ev.Deliveries[0]; d.Error == nil || d.StatusCode != nil ||
		!strings.Contains(*d.Error, "no webhook") || !strings.Contains(*d.Error, "will be retried") ||
		!strings.Contains(*d.Error, "api_keys[].webhook") {
		t.Fatalf("the young event's try: %+v", d)
	}

	err = try(old)
	if !errors.As(err, &cancelled) {
		t.Fatalf("the event past retry_for: the try returned %v, want river.JobCancel (give up)", err)
	}
	ev = e.waitStatus(t, "acme", old.ID, store.EventAbandoned, 1)
	if d := ev.Deliveries[0]; d.Error == nil || d.StatusCode != nil ||
		!strings.Contains(*d.Error, "no webhook") || !strings.Contains(*d.Error, "retry_for (24h0m0s)") {
		t.Fatalf("the abandoned try: %+v", d)
	}
	select {
	case r := <-rc.got:
		t.Fatalf("sent %s to an owner without a webhook", r.body)
	default:
	}

	// A replica with the newer configuration restores the webhook: the
	// young event is delivered.
	if err := e.st.SyncConfigWebhooks(ctx, map[string]string{"acme": rc.srv.URL}); err != nil {
		t.Fatal(err)
	}
	if err := try(young); err != nil {
		t.Fatalf("the try after the webhook was restored: %v", err)
	}
	if p := verified(t, rc.next(t)); p.Job.ID != young.ID {
		t.Fatalf("delivered job %s, want %s", p.Job.ID, young.ID)
	}
	e.waitStatus(t, "acme", young.ID, store.EventDelivered, 2)
}
