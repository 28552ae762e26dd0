package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// A second try of an event while the first is still sending it (River ran
// the job again: its rescuer, on a leader whose clock runs ahead of the
// database's, took the first try for stuck) sends nothing: the first try
// holds the event's send lease, on the database clock, and the second snoozes
// until it ends. The first try's record then frees the lease. Both tries are
// Worker.Work called directly, the first held in the receiver.
func TestASecondTryWhileTheFirstSendsSendsNothing(t *testing.T) {
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if requests.Add(1) == 1 {
			close(entered)
			<-release
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL, 5*time.Second)
	j := e.cancel(t, "acme", "k1")
	id := e.events(t, "acme", j.ID)[0].ID
	cfg := webhook.Config{Timeout: 30 * time.Second, Secrets: map[string]string{"acme": secret}}
	job := func(attempt int) *river.Job[webhook.DeliverArgs] {
		return &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: attempt, MaxAttempts: 10000},
			Args: webhook.DeliverArgs{EventID: id, Owner: "acme"}}
	}

	first := make(chan error, 1)
	go func() { first <- webhook.NewWorker(e.st, cfg).Work(ctx, job(1)) }()
	<-entered // the first try is sending

	// The rescued run of the same job, on another replica.
	err := webhook.NewWorker(e.st, cfg).Work(ctx, job(2))
	var snooze *rivertype.JobSnoozeError
	if !errors.As(err, &snooze) {
		t.Errorf("the second try returned %v, want a snooze", err)
	} else if lease := cfg.Timeout + 10*time.Second + 5*time.Second + 5*time.Second; snooze.Duration <= 0 || snooze.Duration > lease {
		t.Errorf("the second try snoozed %s, want until the first try's lease ends (at most %s)", snooze.Duration, lease)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the receiver got %d requests, want 1: the event was sent again while its first try was in flight", n)
	}
	var held bool
	if err := e.db.Pool.QueryRow(ctx, `SELECT sending_until > now() AND sender IS NOT NULL FROM job_events WHERE id = $1`, id).Scan(&held); err != nil || !held {
		t.Errorf("the first try's lease: held %v, %v; want held while it sends", held, err)
	}

	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the first try: %v", err)
	}
	ev := e.waitStatus(t, "acme", j.ID, store.EventDelivered, 1)
	if ev.Tries != 1 {
		t.Errorf("tries %d, want 1", ev.Tries)
	}
	var cleared bool
	if err := e.db.Pool.QueryRow(ctx, `SELECT sending_until IS NULL AND sender IS NULL FROM job_events WHERE id = $1`, id).Scan(&cleared); err != nil || !cleared {
		t.Errorf("the lease after the first try's record: cleared %v, %v; want cleared", cleared, err)
	}
}

// failingReads is the real store whose reads of events fail, as a closed
// connection would.
type failingReads struct{ *store.Store }

func (failingReads) ClaimEventForDelivery(context.Context, string, store.SendClaim) (*store.Event, *store.Webhook, *store.Job, error) {
	return nil, nil, nil, errors.New("conn closed")
}

// At River's last attempts, an error other than a failed send (a read, here)
// is a snooze: River discarded a job that failed at its last attempt, leaving
// the event pending with nothing to deliver it. The attempt before the last
// snoozes too, so that a job's attempt stays below max_attempts between tries
// and River's rescuer, which discards a stuck job at its last attempt,
// retries it instead. Earlier attempts' errors are River's retries.
func TestNoErrorOfTheLastAttemptsReachesRiver(t *testing.T) {
	e := setup(t, "http://127.0.0.1:1/", 5*time.Second)
	j := e.cancel(t, "acme", "k1")
	id := e.events(t, "acme", j.ID)[0].ID
	w := webhook.NewWorker(failingReads{e.st}, webhook.Config{Secrets: map[string]string{"acme": secret}})
	for _, c := range []struct {
		attempt, max int
		snooze       bool
	}{{10000, 10000, true}, {9999, 10000, true}, {1, 10000, false}} {
		err := w.Work(context.Background(), &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: c.attempt, MaxAttempts: c.max},
			Args: webhook.DeliverArgs{EventID: id, Owner: "acme"}})
		var snooze *rivertype.JobSnoozeError
		if got := errors.As(err, &snooze); got != c.snooze || err == nil {
			t.Errorf("attempt %d of %d: Work returned %v; want a snooze: %v", c.attempt, c.max, err, c.snooze)
		}
	}
}
