package webhook_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// A webhook URL's path is often the endpoint's credential (Slack's
// /services/T…/B…/<token>): a try's error, River's log line for the retry and
// the router's own "try failed" line leave the URL out (sendError, netredact),
// and docs/operations.md says those lines carry "never the URL". But many
// receivers' error pages quote the path they were asked for — Express's
// default 404 is "Cannot POST /the/path", Spring Boot's JSON error has
// "path": "/the/path" — and the first 256 bytes of a non-2xx answer go into
// the try's error, which both log lines carry whole: the token reaches the
// logs on every failed try.
func TestAnswerQuotingTheWebhookPathKeepsItOutOfTheLogs(t *testing.T) {
	const token = "m2zXaQ9kWpLs8vT3nYcE"
	const path = "/services/T024BE7LD/B07R2K7QF/" + token
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			// Express's default answer to a route it does not have.
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot POST %s</pre>\n</body>\n</html>\n", r.URL.Path)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	v := newVisibleEnv(t, srv.URL+path)
	j := v.cancel(t, "acme", "k1")
	v.start(t)
	if o := v.outcome(t); o != webhook.OutcomeFailed {
		t.Fatalf("the first try was counted %q, want %q", o, webhook.OutcomeFailed)
	}
	if o := v.outcome(t); o != webhook.OutcomeDelivered {
		t.Fatalf("the second try was counted %q, want %q", o, webhook.OutcomeDelivered)
	}
	ev := v.waitStatus(t, "acme", j.ID, store.EventDelivered, 2)
	// The stored error (GET /v1/jobs/{id}/events, River's record) is the
	// logged one: the answer's text with the secret path shown as
	// netredact.WebhookURL shows it.
	if e := ev.Deliveries[0].Error; e == nil || strings.Contains(*e, token) || !strings.Contains(*e, "Cannot POST /services/…</pre>") {
		b, _ := json.Marshal(e)
		t.Errorf("the first try's stored error is %s, want the answer with the path after /services/ shown as …", b)
	}
	if len(v.lines(t, "webhook delivery try failed")) != 1 {
		t.Fatalf("want one failed try logged:\n%s", v.text())
	}
	for l := range strings.Lines(v.text()) {
		if strings.Contains(l, token) {
			t.Errorf("a log line carries the webhook URL's secret path segment %q:\n%s", token, l)
		}
	}
}
