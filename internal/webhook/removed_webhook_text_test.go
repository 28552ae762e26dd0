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
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// An owner whose configured webhook a replica's start removed, while it has
// a key made with --webhook-url that the removed webhook holds back: each try
// of its events, and the abandonment of one webhooks.retry_for old, says that
// the configured webhook was removed and until when it keeps its place, and
// names `router keys forget-removed-webhook --owner acme` — neither that no
// hooked key exists, nor `router keys create --webhook-url` as the fix (it is
// refused), nor that the abandonment is as it should be. After that command
// the owner's key takes the waiting event.
func TestRemovedConfiguredWebhookTriesAndAbandonmentSayWhatHoldsThem(t *testing.T) {
	ctx := context.Background()
	rc := newReceiver(t, func(int) int { return http.StatusNoContent })
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	if _, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: rc.srv.URL + "/key"}); err != nil {
		t.Fatal(err)
	}
	// The configuration gives acme a webhook, which overrides the key's.
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": rc.srv.URL + "/configured"}); err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, st: db.Store, svc: newService(t, db, 5*time.Second)}
	young := e.cancel(t, "acme", "young")
	old := e.cancel(t, "acme", "old")
	if _, err := e.db.Pool.Exec(ctx, `UPDATE job_events SET created_at = now() - interval '25 hours' WHERE job_id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	// A replica without acme's webhook in its configuration starts.
	if err := e.st.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, RetryFor: 24 * time.Hour,
		Secrets: map[string]string{"acme": secret}})
	try := func(j *store.Job) error {
		t.Helper()
		id := e.events(t, "acme", j.ID)[0].ID
		return w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000},
			Args: webhook.DeliverArgs{EventID: id}})
	}
	check := func(what, msg string, want ...string) {
		t.Helper()
		for _, s := range append(want, "forget-removed-webhook --owner acme", "keeps its place until", "api_keys[].webhook") {
			if !strings.Contains(msg, s) {
				t.Errorf("%s does not say %q: %s", what, s, msg)
			}
		}
		for _, s := range []string{"nor an unrevoked key made with --webhook-url sets one", "as it should be",
			"give it one again with `router keys create"} {
			if strings.Contains(msg, s) {
				t.Errorf("%s says %q: %s", what, s, msg)
			}
		}
	}
	var cancelled *rivertype.JobCancelError
	if err := try(young); err == nil || errors.As(err, &cancelled) {
		t.Fatalf("the young event's try returned %v, want an error River retries", err)
	}
	ev := e.waitStatus(t, "acme", young.ID, store.EventPending, 1)
	check("the young event's try", *ev.Deliveries[0].Error, "will be retried")
	if err := try(old); !errors.As(err, &cancelled) {
		t.Fatalf("the event past retry_for: the try returned %v, want river.JobCancel", err)
	}
	ev = e.waitStatus(t, "acme", old.ID, store.EventAbandoned, 1)
	check("the abandonment", *ev.Deliveries[0].Error, "retry_for (24h0m0s)")

	// What the text says to do when the webhook was removed on purpose.
	if _, err := e.st.ForgetRemovedWebhook(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if err := try(young); err != nil {
		t.Fatalf("the try after forget-removed-webhook: %v", err)
	}
	ev = e.waitStatus(t, "acme", young.ID, store.EventDelivered, 2)
	if u := ev.Deliveries[1].URL; !strings.HasSuffix(u, "/key") {
		t.Errorf("delivered to %s, want the key's webhook", u)
	}
}
