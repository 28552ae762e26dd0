// Package webhookverify is a self-contained example of checking the router's
// completion-event webhooks (docs/api.md, "Completion events"): copy it into
// your receiver. It uses only the standard library.
package webhookverify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Verify checks a delivery's Standard Webhooks signature. secret is the
// owner's webhook secret ("whsec_..." from `router keys create --webhook-url`,
// or the value of api_keys[].webhook.secret_env).
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || sigs == "" || err != nil {
		return errors.New("missing or malformed webhook headers")
	}
	// Refuse old (replayed) or far-future messages.
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return errors.New("webhook-timestamp too far from now")
	}
	key := []byte(secret)
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if key, err = base64.StdEncoding.DecodeString(rest); err != nil {
			return errors.New("malformed secret")
		}
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, s := range strings.Fields(sigs) { // several during a secret rotation
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return errors.New("signature mismatch")
}

// MaxBodyBytes is the largest delivery body Handler reads; a larger one is
// answered 413 (the router redelivers it, and its last_error says so).
// A body is {"type": …, "job": <job resource>}: the job's input (at most
// the router's http.max_body_bytes, default 1 MiB), its result (at most the
// winning provider's providers[].max_response_bytes, default 8 MiB), the
// attempts' metadata, and JSON escaping, which can write one input or result
// byte (<, > or &) as six (\u003c). 64 MiB holds 6 × (1 + 8) MiB with room
// for the attempts; raise it if you raise those two limits.
const MaxBodyBytes = 64 << 20

// Event is the body of a delivery.
type Event struct {
	Type string `json:"type"` // job.succeeded, job.failed, job.cancelled, job.unknown
	Job  struct {
		ID string `json:"id"`
		// Version orders the events of one job: apply an event only if it
		// is higher than the version stored for the job (see Handler).
		Version int64           `json:"version"`
		State   string          `json:"state"`
		Result  json.RawMessage `json:"result"`
		Error   *string         `json:"error"`
	} `json:"job"`
}

// Handler verifies each delivery and passes its webhook-id (the event id,
// the same on every redelivery) and event to handle; it answers 2xx only
// when handle returns nil. Any other answer makes the router redeliver
// later, except 410 Gone: that makes it abandon the event at once, never to
// send it again, so answer 410 only when this endpoint is gone for good,
// never for a delivery you failed to handle (Handler never does).
// Deliveries are at-least-once, so handle gets redeliveries of
// events it has handled, and of events whose handling failed or was cut
// short. handle must therefore record id in the same database transaction
// as the event's effect, and return nil without doing anything when id is
// already recorded:
//
//	tx := db.Begin()
//	INSERT INTO webhook_events (id) VALUES ($1) ON CONFLICT DO NOTHING
//	if no row was inserted: tx.Rollback(); return nil // handled before
//	... apply ev within tx ...
//	return tx.Commit()
//
// Then a failure or a crash before the commit records neither, and the
// redelivery is handled; a separate "seen" check before handling would
// acknowledge that redelivery unhandled, and the event would be lost. An
// effect outside your database (an e-mail, a call to another service) cannot
// share the transaction: pass id on as its idempotency key instead.
//
// A job can have several events (job.unknown, then job.succeeded once the
// unknown attempt is resolved; job.failed, then another after a retry), and
// they can arrive out of order: an event whose try failed is redelivered
// after its job's later events. Each event's job is the job as that
// transition left it, and job.version grows with every change, so apply an
// event's job state only if its job.version is higher than the version you
// stored for job.id, within the same transaction:
//
//	UPDATE my_jobs SET state = $3, version = $2 WHERE id = $1 AND version < $2
//	(or INSERT ... ON CONFLICT (id) DO UPDATE ... WHERE my_jobs.version < excluded.version)
//
// An older event is then recorded as handled and changes nothing.
func Handler(secret string, handle func(id string, ev Event) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Never truncate: a cut body fails the signature check, which says
		// nothing about the real problem.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, "body larger than webhookverify.MaxBodyBytes: raise it", http.StatusRequestEntityTooLarge)
			return
		}
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		if err := Verify(secret, r.Header, body, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var ev Event
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "body", http.StatusBadRequest)
			return
		}
		if err := handle(r.Header.Get("webhook-id"), ev); err != nil {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
