package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// goneAnswer is what the test's receiver says with its 410.
const goneAnswer = "endpoint deleted"

// A receiver that answers 410 Gone says its endpoint no longer exists: the
// event is abandoned at that try, where it was retried with backoff for the
// whole of webhooks.retry_for (24 h); its last_error says why and what to do.
// Any other failure, a 500 say, still leaves the event to be retried.
func TestGoneAbandonsTheEventAtOnceAndOtherFailuresRetry(t *testing.T) {
	cases := []struct {
		code       int
		wantStatus string
		wantCancel bool
	}{
		{http.StatusGone, store.EventAbandoned, true},
		{http.StatusInternalServerError, store.EventPending, false},
	}
	for _, c := range cases {
		t.Run(http.StatusText(c.code), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.code)
				_, _ = w.Write([]byte(goneAnswer))
			}))
			t.Cleanup(srv.Close)
			e := setup(t, srv.URL, 5*time.Second)
			ctx := context.Background()
			j := e.cancel(t, "acme", "k1")
			id := e.events(t, "acme", j.ID)[0].ID // a fresh event: far younger than webhooks.retry_for

			w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
			err := w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000}, Args: webhook.DeliverArgs{EventID: id}})
			var cancelled *rivertype.JobCancelError
			switch {
			case err == nil:
				t.Fatalf("a try answered %d returned no error", c.code)
			case c.wantCancel && !errors.As(err, &cancelled):
				t.Fatalf("the try answered %d returned %v, want river.JobCancel (no retry)", c.code, err)
			case !c.wantCancel && errors.As(err, &cancelled):
				t.Fatalf("the try answered %d gave up (%v), want an error River retries", c.code, err)
			}
			ev := e.waitStatus(t, "acme", j.ID, c.wantStatus, 1)
			if d := ev.Deliveries[0]; d.StatusCode == nil || *d.StatusCode != c.code {
				t.Fatalf("the recorded try: %+v", d)
			}
			if c.code != http.StatusGone {
				if ev.LastError == nil || strings.Contains(*ev.LastError, "Gone") {
					t.Fatalf("the %d's last_error: %v", c.code, deref(ev.LastError))
				}
				return
			}
			want := webhook.AnsweredPrefix + "410" + webhook.GoneNote + ": " + goneAnswer
			if ev.LastError == nil || *ev.LastError != want {
				t.Fatalf("the abandoned event's last_error: %q, want %q", deref(ev.LastError), want)
			}
			for _, s := range []string{"410", "Gone", "fix the owner's webhook URL", "remove the webhook", "not be sent again"} {
				if !strings.Contains(*ev.LastError, s) {
					t.Fatalf("the abandoned event's last_error does not say %q: %s", s, *ev.LastError)
				}
			}
			if strings.Contains(err.Error(), "will be retried") || strings.Contains(err.Error(), "gave up after") {
				t.Fatalf("River's record of the give-up: %v", err)
			}
		})
	}
}

// Under the delivery service, an event answered 410 is abandoned after its
// one try — its River job cancelled, not scheduled again — counted and
// logged at warn naming the owner (never the secret or the URL); the owner's
// webhook is not disabled: its next event is sent, and delivered.
func TestGoneUnderTheServiceIsAbandonedLoggedAndLeavesTheWebhook(t *testing.T) {
	rc := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusGone
		}
		return http.StatusNoContent
	})
	v := newVisibleEnv(t, rc.srv.URL)
	j1 := v.cancel(t, "acme", "k1")
	v.start(t)
	if o := v.outcome(t); o != webhook.OutcomeAbandoned {
		t.Fatalf("the 410's try was counted %q, want %q", o, webhook.OutcomeAbandoned)
	}
	ev := v.waitStatus(t, "acme", j1.ID, store.EventAbandoned, 1)
	if d := ev.Deliveries[0]; d.StatusCode == nil || *d.StatusCode != http.StatusGone {
		t.Fatalf("the recorded try: %+v", d)
	}
	if state := v.jobSettled(t, ev.ID); state != rivertype.JobStateCancelled {
		t.Fatalf("the 410's delivery job is %s, want cancelled (not retried)", state)
	}
	lines := v.lines(t, "abandoned")
	if len(lines) != 1 {
		t.Fatalf("%d log lines say the event was abandoned, want 1:\n%s", len(lines), v.text())
	}
	if l := lines[0]; l["level"] != "WARN" || l["owner"] != "acme" || l["event_id"] != ev.ID || l["status"] != float64(410) ||
		!strings.Contains(l["msg"].(string), "410 Gone") || !strings.Contains(l["msg"].(string), "fix or remove the owner's webhook URL") {
		t.Fatalf("the abandonment's log line: %v", l)
	}
	if text := v.text(); strings.Contains(text, secret) || strings.Contains(text, rc.srv.URL) {
		t.Fatalf("the log quotes the secret or the webhook URL:\n%s", text)
	}
	rc.next(t) // the 410's request

	j2 := v.cancel(t, "acme", "k2") // the owner's next event still goes to the webhook
	verified(t, rc.next(t))
	if o := v.outcome(t); o != webhook.OutcomeDelivered {
		t.Fatalf("the next event's try was counted %q, want %q", o, webhook.OutcomeDelivered)
	}
	v.waitStatus(t, "acme", j2.ID, store.EventDelivered, 1)
	if got := v.deliveries(t); got["abandoned"] != 1 || got["failed"] != 0 || got["delivered"] != 1 {
		t.Fatalf("router_webhook_deliveries_total: %v, want abandoned 1, delivered 1, failed 0", got)
	}
}

// jobSettled polls the state of event id's delivery job until River has
// recorded the end of its try (River's completer writes it after the worker
// returns): anything but running.
func (e *env) jobSettled(t *testing.T, id string) rivertype.JobState {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var state rivertype.JobState
		if err := e.db.Pool.QueryRow(context.Background(), `SELECT state FROM river_job
			WHERE kind = 'webhook_delivery' AND args->>'event_id' = $1`, id).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state != rivertype.JobStateRunning {
			return state
		}
		if time.Now().After(deadline) {
			t.Fatalf("event %s's delivery job still running after 30s", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
