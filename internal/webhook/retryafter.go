package webhook

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// retryHints is what the worker tells River's retry policy (Backoff) and
// its own snoozes: the database clock's offset from the process clock, and
// the Retry-After of the receiver that answered a try, for the retry River
// schedules next for the try's job.
type retryHints struct {
	off   atomic.Int64 // the database clock minus the process clock, in nanoseconds
	mu    sync.Mutex
	after map[int64]time.Duration // by River job id; taken by the next NextRetry of the job
	// failed holds the River jobs whose try this process's Work has just
	// failed (noteFailed); taken by the next NextRetry of the job.
	failed map[int64]struct{}
}

// offset is the database clock's offset from the process clock as last
// measured (0 before the first read of an event).
func (h *retryHints) offset() time.Duration {
	if h == nil {
		return 0
	}
	return time.Duration(h.off.Load())
}

// noteClock measures the offset: db is the database's now() of a read that
// returned at local on the process clock (zero db: measured nothing). The
// read's round trip makes it a little early by the database's clock (now()
// is its transaction's start), by milliseconds.
func (h *retryHints) noteClock(db, local time.Time) {
	if h == nil || db.IsZero() {
		return
	}
	h.off.Store(int64(db.Sub(local)))
}

// setRetryAfter keeps the receiver's wait for the retry of River job id.
func (h *retryHints) setRetryAfter(id int64, after time.Duration) {
	if h == nil || after <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.after == nil {
		h.after = map[int64]time.Duration{}
	}
	h.after[id] = after
}

// takeRetryAfter is the receiver's wait kept for the retry of River job id,
// if any, and forgets it.
func (h *retryHints) takeRetryAfter(id int64) time.Duration {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	after := h.after[id]
	delete(h.after, id)
	return after
}

// noteFailed says that Work returned the failure of River job id's try, for
// which River's executor asks NextRetry at once, in this process.
func (h *retryHints) noteFailed(id int64) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed == nil {
		h.failed = map[int64]struct{}{}
	}
	h.failed[id] = struct{}{}
}

// takeFailed says whether Work returned the failure of River job id's try
// (noteFailed), and forgets it.
func (h *retryHints) takeFailed(id int64) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, failed := h.failed[id]
	delete(h.failed, id)
	return failed
}

// retryAfterError is a try whose receiver answered 429 or 503 with a
// Retry-After: the next try waits at least after (at most
// webhooks.backoff_cap). Its text is the answered status's, as for any
// non-2xx answer.
type retryAfterError struct {
	msg   string
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.msg }

// retryAfter reads an answer's Retry-After header (RFC 9110 10.2.3):
// delta-seconds, or an HTTP-date, measured from the answer's Date when it
// has one (both from the receiver's clock), else from now. A date in the
// past is no wait; ok is false when there is no valid header.
func retryAfter(h http.Header, now time.Time) (after time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
				return math.MaxInt64, true // more than any cap
			}
			return 0, false
		}
		if secs > uint64(math.MaxInt64/int64(time.Second)) {
			return math.MaxInt64, true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d, err := http.ParseTime(h.Get("Date")); err == nil {
		now = d
	}
	return max(0, t.Sub(now)), true
}
