package api

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Limits are one owner's limits (SPEC §17); a zero field is unlimited.
type Limits struct {
	// MaxLiveJobs bounds the owner's pending, running and unknown jobs.
	MaxLiveJobs int
	// RequestsPerSecond bounds the owner's authenticated requests on this
	// replica (a token bucket of Burst tokens; Burst 0 is the rate rounded up).
	RequestsPerSecond float64
	Burst             int
}

// LiveCounter counts an owner's live (pending, running, unknown) jobs in the
// database; store.Store implements it.
type LiveCounter interface {
	CountLiveJobs(ctx context.Context, owner string) (int, error)
}

// limiter enforces per-owner limits without a database round trip per request:
// the rate is an in-memory token bucket per owner (per replica), and the live
// job count is read from the database at most once per refresh interval per
// owner, plus this replica's own admissions since that read (less those it
// saw end); only a refusal at the limit may read it sooner (admit).
type limiter struct {
	defaults Limits
	owners   map[string]Limits
	refresh  time.Duration
	count    LiveCounter
	// readTimeout bounds each read of an owner's live count (liveReadTimeout;
	// tests set their own), whatever the deadline of the request reading it.
	readTimeout time.Duration
	now         func() time.Time // the clock of refresh (tests set one)
	// keyWait, when set (tests), is called when a request refused at the
	// limit starts waiting for an admission under its key (Server.admitLive).
	keyWait atomic.Pointer[func()]

	mu  sync.Mutex
	per map[string]*ownerLimit
}

type ownerLimit struct {
	lim  Limits
	rate *rate.Limiter // nil: no rate limit
	// rateMu orders the clock's reads with the bucket's takes (allow).
	rateMu sync.Mutex

	// mu guards the fields below; it is never held during I/O (a read of
	// the count lets it go: reading).
	mu       sync.Mutex
	counted  int       // live jobs in the database at readAt
	readAt   time.Time // zero: never read, or to be read again
	reads    uint64    // reads of the database's count so far
	admitted int       // jobs this replica created for the owner since readAt
	inflight int       // admissions whose creation has not finished
	// replays counts the admissions in inflight that cannot create a job:
	// under an idempotency key with another admission in flight on this
	// replica, at most one of them creates the key's job (the first to claim
	// the key) and the others are its replays, or all are once one created
	// it (keyFlight). They take no place under the limit: the count's
	// creations in flight are inflight - replays.
	replays int
	// overlap counts the admissions in inflight that were already in flight
	// at the last read: the read may or may not have seen each one's job
	// (its commit may have come first), so it may be counted twice, by the
	// read and in inflight. Like uncertain, it is a reason not to refuse at
	// the limit: a refusal waits for them to end, then reads again.
	overlap int
	// overlapDone, when not nil, is closed when overlap reaches 0 (for
	// admissions waiting on it).
	overlapDone chan struct{}
	// uncertain counts jobs created while the count was being read: that
	// read may or may not have seen each (it depends on whose commit came
	// first). They are counted (an upper bound) until the next read, and
	// are the reason to read again rather than refuse at the limit.
	uncertain int
	// endedUnread says this replica saw one of the owner's jobs end that
	// the last read may have counted (it was created before that read, or
	// during it): a refusal at the limit reads the count again first (at
	// most once per recheck interval). A job that ended and was counted
	// only since the last read is simply taken off the count (liveSlot.ended).
	endedUnread bool
	// keys are the idempotency keys ("operation\x00key") of the admissions in
	// flight on this replica: a request under one of them, refused at the
	// limit, waits for them to end (its job may be theirs) instead; one
	// admitted under one of them takes no place of its own (replays).
	keys map[string]*keyFlight
	// reading, when not nil, is the read of the count in progress: no
	// admission is made until it ends (they wait for it, or for their own
	// request to end), while done, ended and liveRefusedAtClaim go on, in
	// memory only (readCount).
	reading *liveRead
}

// keyFlight is one key's admissions in flight; done is closed when the last
// of them ends. created says that one of its admissions has created the key's
// job: the others still in flight are its replays.
type keyFlight struct {
	n       int
	created bool
	done    chan struct{}
}

// replays is how many of the key's admissions in flight cannot create a job:
// all once one of them created it, else all but one (none of none).
func (f *keyFlight) replays() int {
	if f.created || f.n == 0 {
		return f.n
	}
	return f.n - 1
}

func newLimiter(defaults Limits, owners map[string]Limits, refresh time.Duration, count LiveCounter) *limiter {
	if refresh <= 0 {
		refresh = time.Second
	}
	return &limiter{defaults: defaults, owners: owners, refresh: refresh, count: count, readTimeout: liveReadTimeout,
		now: time.Now, per: map[string]*ownerLimit{}}
}

func (l *limiter) of(owner string) *ownerLimit {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o, ok := l.per[owner]; ok {
		return o
	}
	lim, ok := l.owners[owner]
	if !ok {
		lim = l.defaults
	}
	o := &ownerLimit{lim: lim}
	if lim.RequestsPerSecond > 0 {
		burst := lim.Burst
		if burst <= 0 {
			burst = max(1, int(math.Ceil(lim.RequestsPerSecond)))
		}
		o.lim.Burst = burst
		o.rate = rate.NewLimiter(rate.Limit(lim.RequestsPerSecond), burst)
	}
	l.per[owner] = o
	return o
}

// minRateWait and maxRateWait bound the wait a refusal reports: the bucket
// may have refilled between the refusal and the reading of its tokens, and a
// rate can be so small (any positive rate is valid) that its next token is
// further away than a time.Duration reaches.
const (
	minRateWait = time.Millisecond
	maxRateWait = 100 * 365 * 24 * time.Hour
)

// allow takes one request of owner's rate; when refused, it says how long
// until a request would be allowed. withOwner asks it as soon as the key is
// checked, before the request's body is read. A refusal takes no token: AllowN decides
// and takes in one step. (Taking a token with ReserveN and handing it back
// with CancelAt does not work under concurrency: CancelAt gives back only what
// no later reservation has built on, so overlapping refusals drove the bucket
// ever further below zero, and the owner's Retry-After with it.)
func (l *limiter) allow(owner string) (ok bool, retryAfter time.Duration, lim Limits) {
	o := l.of(owner)
	if o.rate == nil {
		return true, 0, o.lim
	}
	// The clock is read under rateMu: x/time/rate stores the time it is
	// handed as its last refill even when it is earlier than the one it had
	// (golang/go#65508), so a request that read the clock before another but
	// took the bucket's lock after it was credited that stretch again, and a
	// flood of concurrent requests got well past the rate (found by review,
	// rauth14).
	o.rateMu.Lock()
	now := time.Now()
	allowed := o.rate.AllowN(now, 1)
	o.rateMu.Unlock()
	if allowed {
		return true, 0, o.lim
	}
	return false, o.rateWait(now), o.lim
}

// rateWait is how long after now o's bucket holds a whole token again, within
// minRateWait and maxRateWait.
func (o *ownerLimit) rateWait(now time.Time) time.Duration {
	if secs := (1 - o.rate.TokensAt(now)) / float64(o.rate.Limit()); secs < maxRateWait.Seconds() {
		return max(time.Duration(secs*float64(time.Second)), minRateWait)
	}
	return maxRateWait
}

// maxOverlapWait bounds how long an admission at the limit waits for the
// creations in flight during the last read of the count to end (each is a
// round trip or two to the database) before reading it again. Past it (a
// creation stuck on a slow database) the owner is refused on the count as it
// stands, which may count those creations twice: the limit is never
// exceeded, and the request is not held for longer.
const maxOverlapWait = time.Second

// admitLive reserves one new live job for owner. When ok, done must be called
// once the job's creation has ended, saying whether a job was created. When
// the owner is at its limit, ok is false and limit is the limit.
func (l *limiter) admitLive(ctx context.Context, owner string) (done func(created bool), ok bool, limit int, err error) {
	slot, refused, err := l.admit(ctx, owner, "")
	if err != nil {
		return nil, false, 0, err
	}
	if refused != nil {
		return nil, false, refused.limit, nil
	}
	return func(created bool) { slot(created) }, true, 0, nil
}

// admit is admitLive for a request under key (its operation and idempotency
// key, liveKey; "" for none): when refused, refused says on what count, and
// whether an admission under the same key is in flight on this replica.
//
// The owner is admitted only while the count's upper bound — the last read,
// plus this replica's admissions since, in flight or done — is below the
// limit, so one replica never takes it above the limit. That bound may count
// a job twice when the read overlapped its creation (uncertain, overlap): at
// the limit, such a count waits for the overlapping creations to end and is
// read again before the owner is refused, so it is not refused below its
// limit on a guess. It may also count jobs that have ended since the read
// (mayHaveEnded): at the limit the count is then read once more before the
// owner is refused — a round trip on the refusal path only, never below the
// limit.
func (l *limiter) admit(ctx context.Context, owner, key string) (done liveDone, refused *liveRefusal, err error) {
	o := l.of(owner)
	if o.lim.MaxLiveJobs <= 0 || l.count == nil {
		return noLiveSlot, nil, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var waitUntil time.Time
	rechecked := false
	fresh := false // this admission read the count, or waited for a read that did
	read := func() error {
		if err := o.readCount(ctx, l, owner); err != nil {
			return err
		}
		fresh = true
		return nil
	}
	// Every step that lets o.mu go (a read, a wait) starts the loop again:
	// the counts may have changed meanwhile.
	for {
		if r := o.reading; r != nil {
			// Another admission is reading the count: wait for it (or for
			// this request's end), holding no lock.
			if err := o.waitRead(ctx, r); err != nil {
				return nil, nil, err
			}
			fresh = fresh || !r.again
			continue
		}
		if !fresh && (o.readAt.IsZero() || l.now().Sub(o.readAt) >= l.refresh) {
			if err := read(); err != nil {
				return nil, nil, err
			}
			continue
		}
		if o.counted+o.admitted+o.creating()+o.uncertain < o.lim.MaxLiveJobs {
			break
		}
		if o.overlap > 0 {
			// Creations in flight during the last read may be counted
			// twice until they end: wait for them, then read again.
			if waitUntil.IsZero() {
				waitUntil = time.Now().Add(maxOverlapWait)
			}
			ended, err := o.waitOverlap(ctx, waitUntil)
			if err != nil {
				return nil, nil, err
			}
			if !ended {
				return nil, o.refusal(l, key), nil
			}
			continue
		}
		switch {
		case o.uncertain > 0:
			// A job created during the last read may be counted twice:
			// read again before refusing, never below the limit on a guess.
		case !rechecked && o.mayHaveEnded(l):
			// Jobs counted may have ended since the read: read again
			// (once per admission) rather than refuse on jobs that ended.
			rechecked = true
		default:
			return nil, o.refusal(l, key), nil
		}
		if err := read(); err != nil {
			return nil, nil, err
		}
	}
	o.inflight++
	o.flyKey(key)
	slot := &liveSlot{o: o, key: key, readsAtAdmission: o.reads}
	return slot.done, nil, nil
}

// creating is how many of the owner's admissions in flight on this replica
// may create a job (o.mu held): one per idempotency key, none for a key whose
// job one of them has created, one per request without a key.
func (o *ownerLimit) creating() int { return o.inflight - o.replays }

// waitOverlap waits, with o.mu held and let go meanwhile, until the creations
// in flight at the last read have ended (ended), until, or until ctx ends (its
// error).
func (o *ownerLimit) waitOverlap(ctx context.Context, until time.Time) (ended bool, err error) {
	if o.overlap == 0 {
		return true, nil
	}
	d := time.Until(until)
	if d <= 0 {
		return false, nil
	}
	if o.overlapDone == nil {
		o.overlapDone = make(chan struct{})
	}
	ch := o.overlapDone
	o.mu.Unlock()
	defer o.mu.Lock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// retryAfterSeconds is a Retry-After value: whole seconds, at least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

func rateDetail(owner string, lim Limits, wait time.Duration) string {
	return fmt.Sprintf("owner %s is over its limit of %g requests per second (burst %d) on this router replica; retry after %s s (limits.requests_per_second in the router's configuration)",
		owner, lim.RequestsPerSecond, lim.Burst, retryAfterSeconds(wait))
}
