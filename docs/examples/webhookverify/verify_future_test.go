package webhookverify_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/routerhq/router/docs/examples/webhookverify"
	"github.com/routerhq/router/internal/webhook"
)

// The documented receiver refuses a far-future webhook-timestamp as its
// comment says ("Refuse old (replayed) or far-future messages"): only the
// stale side was tested, so dropping the future check passed every test.
func TestExampleRefusesAFutureTimestamp(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"type":"job.succeeded","job":{"id":"j1","state":"succeeded"}}`)
	now := time.Now()
	ahead := now.Add(time.Hour)
	sig, err := webhook.Sign(secret, "evt-1", ahead, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", "evt-1")
	h.Set("webhook-timestamp", strconv.FormatInt(ahead.Unix(), 10))
	h.Set("webhook-signature", sig)
	if err := webhookverify.Verify(secret, h, body, ahead); err != nil {
		t.Fatalf("set-up: the signature does not verify at its own time: %v", err)
	}
	if webhookverify.Verify(secret, h, body, now) == nil {
		t.Fatal("a webhook-timestamp an hour in the future verified")
	}
}
