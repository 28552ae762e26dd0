package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A snooze is a duration River adds to its own clock: a worker whose clock
// is two hours behind the database's snoozes two hours longer than the wait,
// so that the job is due after the wait on the database clock, not two hours
// in the past (due at once, on every fetch).
func TestSnoozesAreDueOnTheDatabaseClock(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	db := testdb.New(t, store.Options{})
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": srv.URL}); err != nil {
		t.Fatal(err)
	}
	jobID := cancelledJob(t, db, "acme")
	evs, err := db.Store.JobEvents(ctx, "acme", jobID)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v, %v", evs, err)
	}
	w := NewWorker(db.Store, Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
	const behind = 2 * time.Hour
	w.setBackoff(Backoff{Base: time.Minute, Cap: time.Minute, Now: func() time.Time { return time.Now().Add(-behind) }})
	// At River's last attempt the failed try is snoozed for the backoff.
	err = w.Work(ctx, &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 10000, MaxAttempts: 10000},
		Args: DeliverArgs{EventID: evs[0].ID, Owner: "acme"}})
	var snooze *rivertype.JobSnoozeError
	if !errors.As(err, &snooze) {
		t.Fatalf("Work: %v, want a snooze", err)
	}
	if snooze.Duration < behind || snooze.Duration > behind+time.Minute {
		t.Errorf("snoozed %s, want the backoff (30s to 1m) plus the clock's %s lag", snooze.Duration, behind)
	}
}

// Retry-After: delta-seconds, or an HTTP-date from the answer's Date (the
// receiver's clock) or else from now; a date past is no wait.
func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		retryAfter, date string
		want             time.Duration
		ok               bool
	}{
		{"120", "", 2 * time.Minute, true},
		{" 0 ", "", 0, true},
		{"Thu, 01 Jan 2026 13:00:00 GMT", "", time.Hour, true},
		{"Thu, 01 Jan 2026 13:00:00 GMT", "Thu, 01 Jan 2026 12:30:00 GMT", 30 * time.Minute, true},
		{"Thu, 01 Jan 2026 11:00:00 GMT", "", 0, true},
		{"99999999999999999999999", "", 1<<63 - 1, true},
		{"-5", "", 0, false},
		{"soon", "", 0, false},
		{"", "", 0, false},
	} {
		h := http.Header{}
		if c.retryAfter != "" {
			h.Set("Retry-After", c.retryAfter)
		}
		if c.date != "" {
			h.Set("Date", c.date)
		}
		if got, ok := retryAfter(h, now); got != c.want || ok != c.ok {
			t.Errorf("Retry-After %q, Date %q: %s, %v; want %s, %v", c.retryAfter, c.date, got, ok, c.want, c.ok)
		}
	}
}
