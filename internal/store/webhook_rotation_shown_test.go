package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// RotateWebhookSecretShown hands the rotation to show before committing: a
// secret show could not show (stdout on a full disk) is rolled back, and
// the secret the receiver has keeps signing alone; one shown is committed.
func TestRotateWebhookSecretShownRollsBackWhatCouldNotBeShown(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	k, err := b.st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://hooks.example.com/r"})
	if err != nil {
		t.Fatal(err)
	}
	before, err := b.st.WebhookFor(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	unwritable := errors.New("write /dev/stdout: no space left on device")
	var shown store.RotatedWebhookSecret
	_, err = b.st.RotateWebhookSecretShown(ctx, "acme", time.Hour, func(r store.RotatedWebhookSecret) error {
		shown = r
		return unwritable
	})
	if !errors.Is(err, unwritable) {
		t.Fatalf("got %v, want show's error", err)
	}
	if shown.KeyID != k.ID || shown.Secret == "" || shown.Secret == before.Secret {
		t.Fatalf("show was given %+v, want key %d's new secret", shown, k.ID)
	}
	if after, err := b.st.WebhookFor(ctx, "acme"); err != nil || after != before {
		t.Fatalf("after show failed: %+v (%v), want the webhook unchanged: %+v", after, err, before)
	}

	r, err := b.st.RotateWebhookSecretShown(ctx, "acme", time.Hour, func(r store.RotatedWebhookSecret) error { shown = r; return nil })
	if err != nil || r != shown {
		t.Fatalf("got %+v (%v), want what show was given: %+v", r, err, shown)
	}
	want := store.Webhook{URL: "https://hooks.example.com/r", Secret: r.Secret, PreviousSecret: before.Secret}
	if after, err := b.st.WebhookFor(ctx, "acme"); err != nil || after != want {
		t.Fatalf("after the rotation: %+v (%v), want %+v", after, err, want)
	}
}
