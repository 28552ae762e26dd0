package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// A redirect is a failed try, not followed: signed events go only to the URL
// the owner configured (docs/api.md, "At least once"). The try's error says
// so, and how to mend it: a bare "answered 307" looked like the endpoint's
// failure.
func TestARedirectIsAFailedTryNotFollowed(t *testing.T) {
	var followed atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		followed.Add(1)
		w.WriteHeader(http.StatusOK)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL+"/hook", 5*time.Second)
	ctx := context.Background()
	j := e.cancel(t, "acme", "k1")
	id := e.events(t, "acme", j.ID)[0].ID

	w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
	err := w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000}, Args: webhook.DeliverArgs{EventID: id}})
	var cancelled *rivertype.JobCancelError
	if err == nil || errors.As(err, &cancelled) {
		t.Fatalf("the redirected try returned %v, want an error River retries", err)
	}
	ev := e.waitStatus(t, "acme", j.ID, store.EventPending, 1)
	if d := ev.Deliveries[0]; d.StatusCode == nil || *d.StatusCode != http.StatusTemporaryRedirect ||
		d.Error == nil || *d.Error != "the webhook answered 307 (a redirect, not followed: set the webhook URL to its target)" {
		t.Fatalf("the redirected try: %+v", d)
	}
	if n := followed.Load(); n != 0 {
		t.Fatalf("the redirect was followed %d times", n)
	}
}

// A 3xx that redirects nowhere (300 Multiple Choices, 304 Not Modified) is a
// failed try with its status, not labelled a redirect to follow by hand.
func TestANonRedirect3xxIsNotCalledARedirect(t *testing.T) {
	for _, status := range []int{http.StatusMultipleChoices, http.StatusNotModified} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
		t.Cleanup(srv.Close)
		e := setup(t, srv.URL+"/hook", 5*time.Second)
		j := e.cancel(t, "acme", "k1")
		id := e.events(t, "acme", j.ID)[0].ID
		w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
		if err := w.Work(context.Background(), &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000}, Args: webhook.DeliverArgs{EventID: id}}); err == nil {
			t.Fatalf("HTTP %d: the try succeeded", status)
		}
		ev := e.waitStatus(t, "acme", j.ID, store.EventPending, 1)
		want := "the webhook answered " + strconv.Itoa(status)
		if d := ev.Deliveries[0]; d.Error == nil || *d.Error != want {
			t.Fatalf("HTTP %d: the try's error %v, want %q", status, d.Error, want)
		}
	}
}
