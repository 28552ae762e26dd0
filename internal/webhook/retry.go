package webhook

import (
	"math/rand/v2"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Backoff is River's retry policy for deliveries: capped exponential backoff
// with jitter. The n-th retry waits a random time in [d/2, d] where
// d = min(Base·2^(n-1), Cap). How long retries go on is not a count but the
// worker's RetryFor window (at least 24 h by default).
type Backoff struct {
	Base, Cap time.Duration
	Now       func() time.Time // default time.Now
}

var _ river.ClientRetryPolicy = Backoff{}

// withDefaults fills an unset Base (5s) and Cap (1h), the configuration's
// defaults.
func (b Backoff) withDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = 5 * time.Second
	}
	if b.Cap <= 0 {
		b.Cap = time.Hour
	}
	return b
}

// Delay is the wait after the attempt-th failed try (attempt >= 1). The
// doubling stops at Cap without passing it, so no Cap overflows it (a cap
// over 146 years doubled into a negative wait, and rand.N panicked in River's
// retry policy; the configuration now bounds webhooks.backoff_cap by
// retry_for, which has no upper bound).
func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Base
	for i := 1; i < attempt && d < b.Cap; i++ {
		if d > b.Cap/2 {
			d = b.Cap
			break
		}
		d *= 2
	}
	if d > b.Cap {
		d = b.Cap
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// NextRetry implements river.ClientRetryPolicy.
func (b Backoff) NextRetry(job *rivertype.JobRow) time.Time {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	return now().Add(b.Delay(max(job.Attempt, 1)))
}
