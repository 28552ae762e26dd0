package store_test

import (
	"context"
	"encoding/json"
	"testing"
)

// An event's body is the job as its transition left it (docs/api.md), even
// when what changed afterwards did not move the job's version: a valid answer
// that came after a cancellation adds a discarded race event and the
// attempt's usage without a new version, and the first try, made after that,
// must still show the job as the cancellation left it (its snapshot).
func TestCancelledEventBodyIgnoresWhatCameAfterAtTheSameVersion(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	acmeHasWebhook(t, b)
	j, c := runningJob(t, b.st, "acme", "snap1")
	if err := b.st.CancelJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	// The provider's answer to the cancelled attempt arrives afterwards.
	c.Usage = json.RawMessage(`{"prompt_tokens":10,"completion_tokens":5}`)
	off, err := b.st.OfferCompletion(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if off.Won || !off.UsageStored {
		t.Fatalf("the late answer: %+v, want discarded with its usage stored", off)
	}
	var eventID string
	var recorded int
	if err := b.db.Pool.QueryRow(ctx, `SELECT id::text, jsonb_array_length(snapshot->'race_events') FROM job_events
		WHERE job_id = $1 AND type = 'job.cancelled'`, j.ID).Scan(&eventID, &recorded); err != nil {
		t.Fatal(err)
	}
	_, _, got, err := b.st.EventForDelivery(ctx, eventID) // the first try's read
	if err != nil {
		t.Fatal(err)
	}
	if got.State != "cancelled" {
		t.Fatalf("job.cancelled body shows state %q", got.State)
	}
	if len(got.RaceEvents) != recorded {
		t.Errorf("job.cancelled body built at the first try has %d race event(s); the cancellation left %d", len(got.RaceEvents), recorded)
	}
	for _, a := range got.Attempts {
		if len(a.Usage) > 0 && string(a.Usage) != "null" {
			t.Errorf("attempt %d in the job.cancelled body carries usage %s stored after the cancellation", a.Seq, a.Usage)
		}
	}
}
