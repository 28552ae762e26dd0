package webhook_test

import (
	"context"
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

// A try the endpoint answered with an error keeps the start of the answer in
// its error (GET /v1/jobs/{id}/events, the log; the dashboard shows only its status): often a proxy's
// error page or the receiver's own message says what is wrong. The text is
// valid UTF-8 with control characters (an ANSI escape, line breaks, a NUL)
// made spaces, so it shows as one line and cannot rewrite a terminal.
func TestFailedTryKeepsTheStartOfTheAnswer(t *testing.T) {
	const head = "upstream \x1b[31mdown\x1b[0m\r\n\tretry\x00 later \xff!\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(head + strings.Repeat("x", 1000)))
	}))
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL, 5*time.Second)
	j := e.cancel(t, "acme", "k1")
	id := e.events(t, "acme", j.ID)[0].ID
	w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
	if err := w.Work(context.Background(), &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000},
		Args: webhook.DeliverArgs{EventID: id}}); err == nil {
		t.Fatal("a try answered 503 returned no error")
	}
	ev := e.waitStatus(t, "acme", j.ID, store.EventPending, 1)
	// 256 bytes of the body: the U+FFFD stands for the malformed byte.
	want := "the webhook answered 503: upstream [31mdown [0m retry later \uFFFD! " + strings.Repeat("x", 256-len(head)) + "…"
	if d := ev.Deliveries[0]; d.StatusCode == nil || *d.StatusCode != 503 || d.Error == nil || *d.Error != want {
		t.Fatalf("the recorded try: %+v\nerror %q\nwant  %q", d, deref(d.Error), want)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
