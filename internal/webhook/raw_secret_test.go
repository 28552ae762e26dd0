package webhook_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// rawSecret is a secret without whsec_ that the router accepts (at least 24
// bytes, used as given): the common `openssl rand -hex 32`.
const rawSecret = "3f1c9a0d5b7e2f4a6c8e0b1d3f5a7c9e1b3d5f7a9c0e2b4d6f8a0c2e4b6d8f0a"

// signedHeaders signs body with the router's signature for secret.
func signedHeaders(t *testing.T, secret string, body []byte) http.Header {
	t.Helper()
	now := time.Now()
	sig, err := webhook.Sign(secret, "evt-1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set(webhook.HeaderID, "evt-1")
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(webhook.HeaderSignature, sig)
	return h
}

// What the router's warning (and docs/api.md) tells a receiver holding a
// secret without whsec_: the Standard Webhooks library verifies the router's
// deliveries when given the secret as raw bytes (NewWebhookRaw), and never
// when given it as a string, which it base64-decodes.
func TestRawSecretVerifiesWithAStandardWebhooksLibraryOnlyAsRawBytes(t *testing.T) {
	if err := webhook.ValidateSecret(rawSecret); err != nil {
		t.Fatalf("the router refuses the secret: %v", err)
	}
	body := []byte(`{"type":"job.succeeded","job":{"id":"j1"}}`)
	h := signedHeaders(t, rawSecret, body)
	raw, err := standardwebhooks.NewWebhookRaw([]byte(rawSecret))
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Verify(body, h); err != nil {
		t.Fatalf("a delivery signed with a raw secret fails NewWebhookRaw: %v", err)
	}
	if decoded, err := standardwebhooks.NewWebhook(rawSecret); err == nil && decoded.Verify(body, h) == nil {
		t.Fatal("the library verified a raw secret given as a string: the warning about raw secrets is wrong")
	}
	// A whsec_ secret verifies given as the string it is.
	lib, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := lib.Verify(body, signedHeaders(t, secret, body)); err != nil {
		t.Fatalf("a whsec_ secret: %v", err)
	}
}

// A configured secret without whsec_ is allowed, but receivers' Standard
// Webhooks libraries verify it only when told it is raw: the service warns at
// start, per owner and variable, saying how, and says nothing of whsec_
// secrets.
func TestServiceWarnsOfAConfiguredSecretWithoutWhsecPrefix(t *testing.T) {
	db := testdb.New(t, store.Options{})
	var logs bytes.Buffer
	_, err := webhook.NewService(db.Pool, db.Store, webhook.ServiceConfig{
		Config: webhook.Config{
			Secrets:         map[string]string{"acme": rawSecret, "globex": secret},
			PreviousSecrets: map[string]string{"acme": secret, "initech": rawSecret},
		},
		Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if !strings.Contains(line, "no whsec_ prefix") {
			continue
		}
		if !strings.Contains(line, "NewWebhookRaw") || !strings.Contains(line, `format: \"raw\"`) {
			t.Errorf("the warning does not say how to verify with a raw secret: %s", line)
		}
		if strings.Contains(line, rawSecret) {
			t.Errorf("the warning shows the secret: %s", line)
		}
		for _, w := range []string{"owner=acme variable=api_keys[].webhook.secret_env", "owner=initech variable=api_keys[].webhook.previous_secret_env",
			"owner=globex", "owner=acme variable=api_keys[].webhook.previous_secret_env"} {
			if strings.Contains(line, w) {
				warned = append(warned, w)
			}
		}
	}
	want := []string{"owner=acme variable=api_keys[].webhook.secret_env", "owner=initech variable=api_keys[].webhook.previous_secret_env"}
	if strings.Join(warned, "|") != strings.Join(want, "|") {
		t.Fatalf("warned of %q, want %q (the raw secrets only); logs:\n%s", warned, want, logs.String())
	}
}
