package webhook_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/webhook"
)

// Verify's replay protection holds both ways (Standard Webhooks: a timestamp
// too far from now, in the past or in the future, is refused): a genuine
// signature on a timestamp an hour ahead of the receiver's clock would
// otherwise verify, and a captured delivery dated ahead could be replayed
// for as long. TestSignMatchesStandardWebhooksVector checks only an old one.
func TestVerifyRefusesAFutureTimestamp(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	now := time.Unix(1614265330, 0)
	ahead := now.Add(time.Hour)
	sig, err := webhook.Sign(secret, "msg_1", ahead, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set(webhook.HeaderID, "msg_1")
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(ahead.Unix(), 10))
	h.Set(webhook.HeaderSignature, sig)
	if err := webhook.Verify(secret, h, body, ahead, 5*time.Minute); err != nil {
		t.Fatalf("set-up: the signature does not verify at its own time: %v", err)
	}
	if err := webhook.Verify(secret, h, body, now, 5*time.Minute); err == nil || !strings.Contains(err.Error(), "tolerance") {
		t.Fatalf("a timestamp an hour in the future: err=%v, want a tolerance error", err)
	}
}
