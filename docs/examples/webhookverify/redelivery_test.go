package webhookverify_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/docs/examples/webhookverify"
	"github.com/routerhq/router/internal/webhook"
)

// ledger is a receiver's database as Handler's doc asks handle to use it: the
// event's effect (handled) and its webhook-id are recorded together, or
// neither when the handling fails.
type ledger struct {
	mu      sync.Mutex
	ids     map[string]bool
	handled []webhookverify.Event
	fail    int // the next fail calls fail, recording nothing
}

func (l *ledger) handle(id string, ev webhookverify.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail > 0 {
		l.fail--
		return errors.New("the database is down") // the transaction rolls back
	}
	if l.ids[id] {
		return nil // a redelivery of a handled event
	}
	if l.ids == nil {
		l.ids = map[string]bool{}
	}
	l.ids[id] = true
	l.handled = append(l.handled, ev)
	return nil
}

// signedRequest is a delivery of body with webhook-id id, signed as the
// router signs it.
func signedRequest(t *testing.T, secret, id string, body []byte) *http.Request {
	t.Helper()
	now := time.Now()
	sig, err := webhook.Sign(secret, id, now, body)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/hook", bytes.NewReader(body))
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	return req
}

// A delivery whose handling fails is answered 503, and its redelivery is
// handled, once: the example used to mark the id seen before handling, so the
// redelivery was acknowledged without being handled and the event was lost.
func TestRedeliveryAfterAFailedHandleIsHandledOnce(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"type":"job.succeeded","job":{"id":"j1","state":"succeeded","result":{"ok":true},"error":null}}`)
	l := &ledger{fail: 1}
	h := webhookverify.Handler(secret, l.handle)
	for i, want := range []int{
		http.StatusServiceUnavailable, // handle fails: the router redelivers
		http.StatusNoContent,          // the redelivery is handled
		http.StatusNoContent,          // a further redelivery is acknowledged, not handled again
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, signedRequest(t, secret, "evt-1", body))
		if rec.Code != want {
			t.Fatalf("delivery %d: answered %d %q, want %d", i+1, rec.Code, rec.Body.String(), want)
		}
	}
	if len(l.handled) != 1 || l.handled[0].Job.ID != "j1" || !l.ids["evt-1"] {
		t.Fatalf("handled %+v with ids %v, want job j1 once, recorded as evt-1", l.handled, l.ids)
	}
}
