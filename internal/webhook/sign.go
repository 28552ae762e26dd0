package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks header names.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Standard Webhooks keys are 24 to 64 bytes (after base64-decoding a whsec_
// secret). A shorter key is guessable; the reference libraries refuse both.
const (
	MinSecretBytes = 24
	MaxSecretBytes = 64
)

// secretHelp says how to make a good secret.
const secretHelp = "generate one with `echo whsec_$(head -c 32 /dev/urandom | base64)` " +
	"(whsec_ and the base64 of 32 random bytes, as `router keys create --webhook-url` makes)"

// secretKey is the HMAC key of a secret: the base64-decoded bytes after a
// "whsec_" prefix, else the secret as given.
func secretKey(secret string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		b, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return nil, fmt.Errorf("webhook secret: the part after whsec_ is not standard base64 (A-Z, a-z, 0-9, + and /, padded with =): %w; look for spaces, quotes or the URL-safe - and _ alphabet", err)
		}
		return b, nil
	}
	return []byte(secret), nil
}

// ValidateSecret checks a signing secret before it is used: a "whsec_"
// secret must be standard base64 and decode to MinSecretBytes to
// MaxSecretBytes bytes; a secret without the prefix is its own key and must be
// at least MinSecretBytes long. The error says what is wrong and how to make a good secret; it
// never contains the secret.
func ValidateSecret(secret string) error {
	if secret == "" {
		return errors.New("webhook secret is empty (or its environment variable is unset): " + secretHelp)
	}
	key, err := secretKey(secret)
	if err != nil {
		return fmt.Errorf("%w; %s", err, secretHelp)
	}
	what := "the part after whsec_ decodes to"
	if !strings.HasPrefix(secret, "whsec_") {
		what = "the secret has no whsec_ prefix, so it is the key as given:"
	}
	switch {
	case len(key) < MinSecretBytes:
		return fmt.Errorf("webhook secret: %s %d bytes, fewer than the %d a signing key needs (a short key can be guessed, an empty one lets anyone forge signatures); %s",
			what, len(key), MinSecretBytes, secretHelp)
	case len(key) > MaxSecretBytes && strings.HasPrefix(secret, "whsec_"):
		// Only a whsec_ key is read by receivers' Standard Webhooks
		// libraries, which refuse a longer one; a raw secret is used as given.
		return fmt.Errorf("webhook secret: %s %d bytes, more than the %d Standard Webhooks allows (receivers' libraries refuse it); %s",
			what, len(key), MaxSecretBytes, secretHelp)
	}
	return nil
}

// Sign returns the webhook-signature value for one message: "v1," and the
// base64 HMAC-SHA256 of "id.timestamp.body". It refuses an empty key: anyone
// can compute an HMAC with it, so the signature would prove nothing.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	if len(key) == 0 {
		return "", errors.New("webhook secret: the signing key is empty, so anyone could forge the signature; " + secretHelp)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, ts.Unix())
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// Verify checks a received webhook: one of the space-separated signatures in
// webhook-signature must match, and webhook-timestamp must be within tolerance
// of now (replay protection).
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	sec, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q is not Unix seconds", tsText)
	}
	ts := time.Unix(sec, 0)
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return fmt.Errorf("webhook-timestamp is %s away from now (tolerance %s)", d.Round(time.Second), tolerance)
	}
	want, err := Sign(secret, id, ts, body)
	if err != nil {
		return err
	}
	for _, s := range strings.Fields(sigs) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return errors.New("no webhook-signature matches: wrong secret, or the body was changed")
}
