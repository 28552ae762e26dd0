package webhook_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/webhook"
)

// The test vector of the Standard Webhooks reference libraries.
func TestSignMatchesStandardWebhooksVector(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	ts := time.Unix(1614265330, 0)
	body := []byte(`{"test": 2432232314}`)
	sig, err := webhook.Sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, body)
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; sig != want {
		t.Fatalf("signature %s, want %s", sig, want)
	}
	h := http.Header{}
	h.Set(webhook.HeaderID, "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set(webhook.HeaderTimestamp, "1614265330")
	h.Set(webhook.HeaderSignature, "v1,bm9wZQ== "+sig)
	if err := webhook.Verify(secret, h, body, ts.Add(time.Minute), 5*time.Minute); err != nil {
		t.Fatalf("verify: %v", err)
	}
	if err := webhook.Verify(secret, h, []byte(`{"test": 1}`), ts, 5*time.Minute); err == nil {
		t.Fatal("a changed body verified")
	}
	if err := webhook.Verify(secret, h, body, ts.Add(time.Hour), 5*time.Minute); err == nil || !strings.Contains(err.Error(), "tolerance") {
		t.Fatalf("an old timestamp: err=%v, want a tolerance error", err)
	}
}

func TestSignWithoutPrefixUsesTheSecretAsGiven(t *testing.T) {
	ts := time.Unix(1, 0)
	a, _ := webhook.Sign("plain-secret", "id", ts, []byte("x"))
	b, _ := webhook.Sign("whsec_cGxhaW4tc2VjcmV0", "id", ts, []byte("x")) // base64("plain-secret")
	if a != b {
		t.Fatalf("raw %s and whsec_-encoded %s of the same key differ", a, b)
	}
}

func TestBackoffIsCappedExponentialWithJitter(t *testing.T) {
	b := webhook.Backoff{Base: time.Second, Cap: time.Minute}
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 7: time.Minute, 40: time.Minute} {
		for range 50 {
			d := b.Delay(attempt)
			if d < want/2 || d > want {
				t.Fatalf("attempt %d: delay %s outside [%s, %s]", attempt, d, want/2, want)
			}
		}
	}
}
