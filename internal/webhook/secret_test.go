package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

func whsec(n int) string {
	return "whsec_" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", n)))
}

// Secrets the router would sign with uselessly are refused, each with what is
// wrong and how to make a good one, and without the secret in the message.
func TestValidateSecretRefusesUnusableSecrets(t *testing.T) {
	for _, c := range []struct {
		name, secret, why string
	}{
		{"empty", "", "is empty"},
		{"prefix only: an empty key anyone can sign with", "whsec_", "decodes to 0 bytes"},
		{"not base64", "whsec_not*base64", "not standard base64"},
		{"URL-safe alphabet", "whsec_" + base64.URLEncoding.EncodeToString([]byte(strings.Repeat("\xfb", 32))), "not standard base64"},
		{"23-byte key", whsec(23), "decodes to 23 bytes, fewer than the 24"},
		{"65-byte key", whsec(65), "decodes to 65 bytes, more than the 64"},
		{"short raw secret", "plain-secret", "no whsec_ prefix, so it is the key as given: 12 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := webhook.ValidateSecret(c.secret)
			if err == nil {
				t.Fatalf("%q accepted", c.secret)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.why) {
				t.Errorf("error %q does not say %q", msg, c.why)
			}
			if !strings.Contains(msg, "head -c 32 /dev/urandom | base64") {
				t.Errorf("error %q does not say how to make a good secret", msg)
			}
			if rest := strings.TrimPrefix(c.secret, "whsec_"); len(rest) > 3 && strings.Contains(msg, rest) {
				t.Errorf("error %q contains the secret", msg)
			}
		})
	}
}

// Good secrets pass, among them the ones the router and its tools make and
// the Standard Webhooks test vector's.
func TestValidateSecretAcceptsGoodSecrets(t *testing.T) {
	for _, s := range []string{
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // Standard Webhooks' vector: 24 bytes
		whsec(24), whsec(32), whsec(64),
		"whsec_" + base64.StdEncoding.EncodeToString([]byte("routerbench webhook secret")), // bench/cmd/routerbench
		strings.Repeat("r", 24), strings.Repeat("r", 64), // no prefix: the key as given
		strings.Repeat("0123456789abcdef", 6), // a raw secret longer than 64 bytes (openssl rand -hex 48): only whsec_ keys have an upper bound
	} {
		if err := webhook.ValidateSecret(s); err != nil {
			t.Errorf("%s refused: %v", s, err)
		}
	}
	// `router keys create --webhook-url` makes the secret; so must every one it makes pass.
	db := testdb.New(t, store.Options{})
	for i := range 20 {
		k, err := db.Store.CreateAPIKeyWith(context.Background(), store.NewAPIKey{Owner: fmt.Sprint("o", i), WebhookURL: "https://hooks.example.com/r"})
		if err != nil {
			t.Fatal(err)
		}
		if err := webhook.ValidateSecret(k.WebhookSecret); err != nil {
			t.Fatalf("a secret made by CreateAPIKeyWith is refused: %v", err)
		}
	}
}

// An empty key signs nothing: with it anyone could compute the signature, so
// Verify must not accept one made with it either.
func TestSignRefusesAnEmptyKey(t *testing.T) {
	ts := time.Unix(1614265330, 0)
	body := []byte(`{"type":"job.succeeded"}`)
	for _, secret := range []string{"", "whsec_"} {
		if sig, err := webhook.Sign(secret, "msg_1", ts, body); err == nil {
			t.Fatalf("secret %q: signed %s", secret, sig)
		} else if !strings.Contains(err.Error(), "empty") {
			t.Fatalf("secret %q: error %q does not say the key is empty", secret, err)
		}
		// A forger's signature: HMAC with the empty key.
		mac := hmac.New(sha256.New, nil)
		fmt.Fprintf(mac, "%s.%d.", "msg_1", ts.Unix())
		mac.Write(body)
		h := http.Header{}
		h.Set(webhook.HeaderID, "msg_1")
		h.Set(webhook.HeaderTimestamp, fmt.Sprint(ts.Unix()))
		h.Set(webhook.HeaderSignature, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		if err := webhook.Verify(secret, h, body, ts, 5*time.Minute); err == nil {
			t.Fatalf("secret %q: a signature anyone can compute verified", secret)
		}
	}
}
