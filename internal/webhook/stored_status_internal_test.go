package webhook

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// racedRecords is the real store where another try of the event (a rescued
// delivery beside the stuck one) records its delivery just before this try's
// record lands.
type racedRecords struct{ *store.Store }

func (s racedRecords) RecordDelivery(ctx context.Context, d store.DeliveryTry) (string, error) {
	if _, err := s.Store.RecordDelivery(ctx, store.DeliveryTry{EventID: d.EventID, Try: d.Try, URL: d.URL,
		StartedAt: d.StartedAt, StatusCode: http.StatusNoContent, Status: store.EventDelivered}); err != nil {
		return "", err
	}
	return s.Store.RecordDelivery(ctx, d)
}

type outcomes struct {
	mu  sync.Mutex
	got []string
}

func (o *outcomes) DeliveryTry(outcome string) {
	o.mu.Lock()
	o.got = append(o.got, outcome)
	o.mu.Unlock()
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// A try that fails when its event is webhooks.retry_for old computes
// "abandoned"; when another try of the event delivered it first, the stored
// event stays delivered (RecordDelivery returns so), and the worker tells of
// what was stored: a failed try, no warning that the event was abandoned and
// "will not be sent again", no count of outcome="abandoned", and no
// river.JobCancel of a delivered event.
func TestAFailedTryBesideADeliveryIsNotAnAbandonment(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	db := testdb.New(t, store.Options{})
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": srv.URL}); err != nil {
		t.Fatal(err)
	}
	jobID := cancelledJob(t, db, "acme")
	const retryFor = time.Hour
	var id string
	if err := db.Pool.QueryRow(ctx, `UPDATE job_events SET created_at = now() - interval '2 hours'
		WHERE job_id = $1 RETURNING id::text`, jobID).Scan(&id); err != nil {
		t.Fatal(err)
	}

	w := NewWorker(racedRecords{db.Store}, Config{Timeout: 5 * time.Second, RetryFor: retryFor,
		Secrets: map[string]string{"acme": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
	obs, logs := &outcomes{}, &lockedBuffer{}
	w.observer, w.log = obs, slog.New(slog.NewTextHandler(logs, nil))
	err := w.Work(ctx, &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 9, Attempt: 1, MaxAttempts: 10000},
		Args: DeliverArgs{EventID: id}})
	if err != nil {
		t.Errorf("Work returned %v; want nil: the event is delivered, nothing is left to retry or give up", err)
	}
	if len(obs.got) != 1 || obs.got[0] != OutcomeFailed {
		t.Errorf("outcomes counted %q; want one %q (the try failed, its event was delivered by another)", obs.got, OutcomeFailed)
	}
	if l := logs.String(); strings.Contains(l, "level=WARN") || strings.Contains(l, "abandoned") || strings.Contains(l, "will be retried") {
		t.Errorf("the worker logged\n%s\nwant neither an abandonment nor a retry: the stored event is delivered", l)
	}
	evs, err := db.Store.JobEvents(ctx, "acme", jobID)
	if err != nil || len(evs) != 1 || evs[0].Status != store.EventDelivered || len(evs[0].Deliveries) != 2 {
		t.Fatalf("the event: %+v, %v; want delivered with both tries", evs, err)
	}
}
