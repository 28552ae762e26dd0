package webhook

import (
	"math/rand/v2"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Backoff is River's retry policy for deliveries: capped exponential backoff
// with jitter. The n-th retry waits a random time in [d/2, d] where
// d = min(Base·2^(n-1), Cap), or as long as the receiver asked (Retry-After
// on a 429 or 503, at most Cap) when that is longer, plus up to an eighth of
// it, at most 30 s (spreadWait). How long retries go on
// is not a count but the worker's RetryFor window (at least 24 h by default).
//
// The wait is on the database clock: River takes the retry's due time from
// NextRetry as an absolute time and writes it as the job's scheduled_at,
// which the database's now() is compared with, so the due time is the
// process clock plus the database clock's offset from it (measured by the
// worker at each read of an event) plus the wait. A replica whose clock is
// behind the database's scheduled its retries in the past, and a receiver
// that is down was tried on every fetch.
type Backoff struct {
	Base, Cap time.Duration
	// Now is the process clock River schedules with; default time.Now. The
	// worker measures the database clock's offset against it.
	Now func() time.Time
	// hints is the worker's (NewWorker, NewService): the clock offset and
	// the receivers' Retry-After. Nil: neither.
	hints *retryHints
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

// now is the process clock (Now).
func (b Backoff) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// NextRetry implements river.ClientRetryPolicy: the process clock, plus the
// database clock's offset from it, plus the wait (Delay, or the receiver's
// Retry-After, spread, when longer). Never before the process clock: River would
// take that for a broken policy and use its own. So a replica whose clock is
// ahead of the database's by more than the wait schedules the retry that
// much late, by the database's clock; River v0.51 offers no way to schedule
// it on the database's.
//
// A delivery River's rescuer retries (rescued: its replica died mid-try) is
// due again within rescueWaitMax, not after a failed try's backoff: its
// endpoint did not fail, and the event was already at least
// rescueStuckAfter late. River asks the same policy for both, at the job's
// attempt count, and at attempt 10 a rescue drew 21 to 43 minutes, from
// attempt 11 on up to backoff_cap (found by review). The killed try still
// counts as one of River's attempts: the backoff after the event's next
// failed try is one step longer.
func (b Backoff) NextRetry(job *rivertype.JobRow) time.Time {
	failed := b.hints.takeFailed(job.ID)
	if !failed && b.rescued(job) {
		return b.now().Add(max(0, rand.N(rescueWaitMax+1)+b.hints.offset()))
	}
	d := b.Delay(max(job.Attempt, 1))
	if after := b.hints.takeRetryAfter(job.ID); after > d {
		d = spreadWait(after) // the owner's tries it answered come back spread, as its held deliveries do
	}
	return b.now().Add(max(0, d+b.hints.offset()))
}

// rescueWaitMax bounds the wait of a rescued delivery (NextRetry): spread
// over a few seconds, so that the tries of a killed replica do not all come
// back in one moment.
const rescueWaitMax = 5 * time.Second

// liveTryMax is the most a live try's River job runs before River asks for
// its retry: its job's timeout at the longest webhooks.timeout (Worker.Timeout
// at MaxTimeout), then the record of the try (recordTimeout), with
// sendLeaseMargin: the send lease of the longest timeout (Worker.sendLease).
const liveTryMax = MaxTimeout + 10*time.Second + recordTimeout + sendLeaseMargin

// rescued says whether River asks for the retry of job because its rescuer
// found the job stuck (its replica died mid-try), not because a try failed.
// River v0.51 asks NextRetry with the job as fetched, still `running`, in
// both cases, and adds the rescuer's error ("Stuck job rescued by
// JobRescuer") only after; what tells them apart is the try's age. AttemptedAt
// is the database's now() at the fetch. River's executor asks as soon as Work
// has returned, at most liveTryMax after it; the rescuer asks for a job whose
// AttemptedAt is older than rescueStuckAfter by its own process's clock —
// this one's, since the rescuer runs with its replica's retry policy. So the
// try is taken for rescued when it is that old by this process's clock and
// older than liveTryMax by the database's (this process's plus the offset
// the worker measured): a replica whose clock runs minutes ahead of the
// database's does not take its failed tries for rescues and retry its
// endpoint every few seconds.
//
// That measure needs the offset, which the worker has only once a read of
// an event has returned: before, it is 0, and on a replica 5 minutes or more
// ahead of the database a try that failed before it (its read failed) was
// taken for a rescue, retried within seconds instead of backing off (found
// by review, rdiff61). So NextRetry asks this only of a job whose try did not
// fail in this process's Work (retryHints.noteFailed): River's executor asks
// at once, in the process whose Work returned the failure; its rescuer asks
// on its leader about a try that never returned.
func (b Backoff) rescued(job *rivertype.JobRow) bool {
	if job.State != rivertype.JobStateRunning || job.AttemptedAt == nil {
		return false
	}
	now := b.now()
	return now.Sub(*job.AttemptedAt) >= rescueStuckAfter && now.Add(b.hints.offset()).Sub(*job.AttemptedAt) > liveTryMax
}
