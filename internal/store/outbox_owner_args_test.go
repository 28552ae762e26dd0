package store_test

import (
	"context"
	"testing"
)

// The outbox names the event's owner in its River job's args — the trigger
// (migration 0026) and the batched win (winSQL) alike — so that the delivery
// worker snoozes a delivery over its owner's limit without reading the event.
func TestOutboxArgsNameTheOwner(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	acmeHasWebhook(t, b)
	won := winFresh(t, b.st, "acme", "o1")
	cancelled, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "o2", `{"k":"o2"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, "acme", cancelled.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{won.ID, cancelled.ID} {
		if n := count(t, b, `SELECT count(*) FROM job_events e JOIN river_job r ON r.kind = 'webhook_delivery'
				AND r.args = jsonb_build_object('event_id', e.id, 'owner', 'acme')
			WHERE e.job_id = $1`, id); n != 1 {
			var args string
			_ = b.db.Pool.QueryRow(ctx, `SELECT string_agg(r.args::text, ', ') FROM job_events e
				JOIN river_job r ON r.args->>'event_id' = e.id::text WHERE e.job_id = $1`, id).Scan(&args)
			t.Errorf("job %s: River job args %s, want {\"event_id\": …, \"owner\": \"acme\"}", id, args)
		}
	}
}
