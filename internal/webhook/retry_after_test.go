package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// retryDue waits until the River job of the job's event is scheduled for a
// retry after a failed try, and returns how far after the database's now()
// it is due, in seconds.
func (e *env) retryDue(t *testing.T, jobID string) float64 {
	t.Helper()
	e.waitStatus(t, "acme", jobID, store.EventPending, 1)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var due float64
		var state string
		err := e.db.Pool.QueryRow(context.Background(), `SELECT r.state::text, extract(epoch FROM r.scheduled_at - now())::float8
			FROM river_job r JOIN job_events ev ON r.args->>'event_id' = ev.id::text WHERE ev.job_id = $1`, jobID).Scan(&state, &due)
		if err != nil {
			t.Fatal(err)
		}
		if state == "retryable" || state == "available" {
			return due
		}
		if time.Now().After(deadline) {
			t.Fatalf("the delivery job is still %s", state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A receiver that answers 429 or 503 with Retry-After (delta-seconds or an
// HTTP-date) is not tried again before it, up to webhooks.backoff_cap: with a
// backoff of milliseconds, the retry is due about when the receiver said,
// plus at most 30 s of spread (an eighth of the wait, at most 30 s: the
// owner's tries it answered do not all come back at once).
func TestRetryAfterIsHonoured(t *testing.T) {
	const backoffCap = 2 * time.Hour
	cases := []struct {
		name     string
		code     int
		header   func() string
		min, max float64 // seconds from the database's now()
	}{
		{"503 delta-seconds", http.StatusServiceUnavailable, func() string { return "3600" }, 3500, 3630},
		{"429 HTTP-date", http.StatusTooManyRequests, func() string { return time.Now().Add(time.Hour).UTC().Format(http.TimeFormat) }, 3500, 3631},
		{"503 beyond the cap", http.StatusServiceUnavailable, func() string { return strconv.Itoa(48 * 3600) }, 7100, 7230},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", c.header())
				w.WriteHeader(c.code)
			}))
			t.Cleanup(srv.Close)
			e := setup(t, srv.URL, 5*time.Second)
			e.svc = newServiceOf(t, e.db, webhook.ServiceConfig{Config: webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}},
				Backoff: webhook.Backoff{Base: 5 * time.Millisecond, Cap: backoffCap}})
			e.start(t)
			j := e.cancel(t, "acme", "k1")
			if due := e.retryDue(t, j.ID); due < c.min || due > c.max {
				t.Errorf("the retry is due in %.0fs, want between %.0fs and %.0fs", due, c.min, c.max)
			}
		})
	}
}

// A replica whose clock is two hours behind the database's schedules its
// retries on the database's clock: its retry policy adds the offset it
// measured at its read of the event. It wrote a due time in the past (River
// then used its own policy, a second), and a receiver that was down was
// tried again at once.
func TestRetriesAreDueOnTheDatabaseClock(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL, 5*time.Second)
	e.svc = newServiceOf(t, e.db, webhook.ServiceConfig{Config: webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}},
		Backoff: webhook.Backoff{Base: time.Hour, Cap: time.Hour, Now: func() time.Time { return time.Now().Add(-2 * time.Hour) }}})
	e.start(t)
	j := e.cancel(t, "acme", "k1")
	if due := e.retryDue(t, j.ID); due < 1700 || due > 3600 {
		t.Errorf("the retry is due in %.0fs on the database clock, want the backoff's 30 to 60 minutes", due)
	}
}
