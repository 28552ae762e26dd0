package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A previous secret that cannot sign (a hand-edited row or variable: the
// router never makes one) no longer fails every delivery to its owner: the
// try carries the current secret's signature alone, and a warning, once per
// owner on the replica, names the owner and says what to fix — without
// either secret.
func TestUnusablePreviousSecretDeliversWithTheCurrentSignature(t *testing.T) {
	const bad = "whsec_not base64 at all!" // the part after whsec_ does not decode
	cases := []struct {
		name   string
		stored bool
		fix    string // in the warning
	}{
		{"stored key's webhook", true, "UPDATE api_keys SET webhook_previous_secret = NULL"},
		{"configured webhook", false, "api_keys[].webhook.previous_secret_env"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			var mu sync.Mutex
			var got []http.Header
			var bodies [][]byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				got, bodies = append(got, r.Header.Clone()), append(bodies, body)
				mu.Unlock()
				w.WriteHeader(http.StatusNoContent)
			}))
			t.Cleanup(srv.Close)
			db := testdb.New(t, store.Options{KeyRetention: time.Hour})
			cfg := Config{Timeout: 5 * time.Second}
			var current string
			if c.stored {
				if _, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: srv.URL}); err != nil {
					t.Fatal(err)
				}
				r, err := db.Store.RotateWebhookSecret(ctx, "acme", time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				current = r.Secret
				for _, q := range []string{`UPDATE api_keys SET webhook_previous_secret = $1 WHERE webhook_previous_secret IS NOT NULL`,
					`UPDATE webhook_owners SET previous_secret = $1 WHERE previous_secret IS NOT NULL`} {
					if tag, err := db.Pool.Exec(ctx, q, bad); err != nil || tag.RowsAffected() != 1 {
						t.Fatalf("%s: %v, %v", q, tag, err)
					}
				}
			} else {
				if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": srv.URL}); err != nil {
					t.Fatal(err)
				}
				current = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
				cfg.Secrets, cfg.PreviousSecrets = map[string]string{"acme": current}, map[string]string{"acme": bad}
			}
			var logs bytes.Buffer
			w := NewWorker(db.Store, cfg)
			w.log = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
			for _, key := range []string{"1", "2"} {
				input := json.RawMessage(`{"k":"` + key + `"}`)
				fp, _ := store.Fingerprint("op", "", "", input)
				j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "op", IdempotencyKey: key,
					Fingerprint: fp, Route: "default", Input: input})
				if err != nil {
					t.Fatal(err)
				}
				if err := db.Store.CancelJob(ctx, "acme", j.ID); err != nil {
					t.Fatal(err)
				}
				evs, err := db.Store.JobEvents(ctx, "acme", j.ID)
				if err != nil || len(evs) != 1 {
					t.Fatalf("events %v, %v", evs, err)
				}
				if err := w.Work(ctx, &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{}, Args: DeliverArgs{EventID: evs[0].ID, Owner: "acme"}}); err != nil {
					t.Fatalf("with a previous secret that cannot sign, the try failed: %v", err)
				}
				if evs, _ = db.Store.JobEvents(ctx, "acme", j.ID); evs[0].Status != store.EventDelivered {
					t.Fatalf("event %s, want delivered", evs[0].Status)
				}
			}
			if len(got) != 2 {
				t.Fatalf("%d deliveries, want 2", len(got))
			}
			for i, h := range got {
				sec, _ := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
				sig := h.Get(HeaderSignature)
				if err := Verify(current, h, bodies[i], time.Unix(sec, 0), 0); err != nil || len(strings.Fields(sig)) != 1 {
					t.Errorf("webhook-signature %q (%v), want the current secret's signature alone", sig, err)
				}
			}
			var warns []map[string]any
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				warns = append(warns, m)
			}
			if len(warns) != 1 {
				t.Fatalf("%d warnings for two deliveries with the same unusable previous secret, want 1: %s", len(warns), logs.String())
			}
			msg, _ := warns[0]["msg"].(string)
			if warns[0]["owner"] != "acme" || !strings.Contains(msg, "previous secret cannot sign") || !strings.Contains(msg, c.fix) {
				t.Errorf("the warning does not name the owner or say what to fix (%q): %s", c.fix, logs.String())
			}
			if strings.Contains(logs.String(), "not base64 at all") || strings.Contains(logs.String(), current[len("whsec_"):]) {
				t.Errorf("the warning holds a secret: %s", logs.String())
			}
		})
	}
}
