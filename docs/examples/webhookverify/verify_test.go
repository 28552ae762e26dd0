package webhookverify_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/docs/examples/webhookverify"
	"github.com/routerhq/router/internal/webhook"
)

// The documented example accepts what the router signs, and refuses a wrong
// secret, a changed body and a stale timestamp.
func TestExampleVerifiesTheRoutersSignature(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"type":"job.succeeded","job":{"id":"j1","state":"succeeded","result":{"ok":true},"error":null}}`)
	now := time.Now()
	sig, err := webhook.Sign(secret, "evt-1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", "evt-1")
	h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	h.Set("webhook-signature", sig)
	if err := webhookverify.Verify(secret, h, body, now); err != nil {
		t.Fatalf("a genuine delivery: %v", err)
	}
	if webhookverify.Verify("whsec_b3RoZXI=", h, body, now) == nil {
		t.Fatal("a wrong secret verified")
	}
	if webhookverify.Verify(secret, h, append([]byte(" "), body...), now) == nil {
		t.Fatal("a changed body verified")
	}
	if webhookverify.Verify(secret, h, body, now.Add(time.Hour)) == nil {
		t.Fatal("a stale timestamp verified")
	}

	l := &ledger{}
	srv := httptest.NewServer(webhookverify.Handler(secret, l.handle))
	defer srv.Close()
	for range 2 { // a redelivery is acknowledged but handled once
		req, _ := http.NewRequest("POST", srv.URL, bytes.NewReader(body))
		req.Header = h.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("handler answered %d", resp.StatusCode)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if got := l.handled; len(got) != 1 || got[0].Type != "job.succeeded" || got[0].Job.ID != "j1" || !l.ids["evt-1"] {
		t.Fatalf("handled %+v with ids %v", got, l.ids)
	}
}

// A genuine delivery larger than the 4 MiB the example used to read (an event
// carries the job's input and result, up to 1 MiB and 8 MiB by default) is
// handled, not cut short and refused as a bad signature; one past
// MaxBodyBytes is a 413 that says so.
func TestHandlerReadsLargeEventsWhole(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	signed := func(body []byte) *http.Request { return signedRequest(t, secret, "evt-big", body) }
	var got []webhookverify.Event
	h := webhookverify.Handler(secret, func(_ string, ev webhookverify.Event) error { got = append(got, ev); return nil })

	text := bytes.Repeat([]byte("x"), 9<<20) // the default limits' input and result together
	body := append(append([]byte(`{"type":"job.succeeded","job":{"id":"j1","state":"succeeded","result":{"text":"`), text...), `"},"error":null}}`...)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, signed(body))
	if rec.Code != http.StatusNoContent || len(got) != 1 || len(got[0].Job.Result) < len(text) {
		t.Fatalf("a %d-byte event: answered %d %q, handled %d events", len(body), rec.Code, rec.Body.String(), len(got))
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, signed(make([]byte, webhookverify.MaxBodyBytes+1)))
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "MaxBodyBytes") {
		t.Fatalf("a body past MaxBodyBytes: answered %d %q, want 413 naming the limit", rec.Code, rec.Body.String())
	}
}
