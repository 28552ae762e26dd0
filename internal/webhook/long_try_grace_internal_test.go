package webhook

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/routerhq/router/internal/config"
)

// A failed try's River job runs up to its timeout (webhooks.timeout + 10 s
// for the reads and the body's freeze) and then the record of its outcome
// (recordTimeout) before River asks for its retry: its retry comes due that
// much after the try started, not webhooks.timeout after. The last look at a
// delivery that waits its owner's turn (lastLook) counted the try as
// webhooks.timeout long, so a retry that came due at the latest it can had
// 45 s, not the minute (ownerBusyGrace) it is owed, to find a slot, and was
// abandoned unsent 15 s early (found by review, rdiff61).
func TestLastRetryAfterALongTryGetsItsWholeGrace(t *testing.T) {
	c := newOwnerBusyCase(t)
	wc := c.w.cfg
	// The latest a retry comes due: the try that failed started just under
	// retry_for old and ran its job's whole time, then the record's; then
	// backoff_cap and the Retry-After spread.
	latest := wc.RetryFor + c.w.Timeout(nil) + recordTimeout + c.w.backoff.Cap + spreadMax(c.w.backoff.Cap)
	age := latest + ownerBusyGrace - time.Second
	c.exec(t, `UPDATE job_events SET created_at = now() - $2::interval WHERE id = $1`, c.id, age)
	err := c.w.Work(context.Background(), c.job(t))
	var snoozed *river.JobSnoozeError
	if !errors.As(err, &snoozed) {
		t.Fatalf("a retry due at the latest it can (%s), its owner at its limit for all but a second of the %s it may wait: %v; "+
			"want it snoozed to its turn, not abandoned (status %q)", latest, ownerBusyGrace, err, c.status(t))
	}
}

// config.DeliveryTryMax, which the redelivery window and lastLook count a
// failed try by, is the worker's job timeout plus the record's.
func TestDeliveryTryMaxIsTheJobAndItsRecord(t *testing.T) {
	for _, timeout := range []time.Duration{time.Second, 10 * time.Second, MaxTimeout} {
		w := NewWorker(nil, Config{Timeout: timeout})
		if got, want := config.DeliveryTryMax(timeout), w.Timeout(nil)+recordTimeout; got != want {
			t.Errorf("config.DeliveryTryMax(%s) = %s, want the job's timeout plus its record's, %s", timeout, got, want)
		}
	}
	if got, want := liveTryMax, config.DeliveryTryMax(MaxTimeout)+sendLeaseMargin; got != want {
		t.Errorf("liveTryMax = %s, want %s", got, want)
	}
}
