package api

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/routerhq/router/internal/store"
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
// owner, plus this replica's own admissions since that read.
type limiter struct {
	defaults Limits
	owners   map[string]Limits
	refresh  time.Duration
	count    LiveCounter
	now      func() time.Time // the clock of refresh (tests set one)

	mu  sync.Mutex
	per map[string]*ownerLimit
}

type ownerLimit struct {
	lim  Limits
	rate *rate.Limiter // nil: no rate limit

	mu       sync.Mutex
	counted  int       // live jobs in the database at readAt
	readAt   time.Time // zero: never read, or to be read again
	reads    uint64    // reads of the database's count so far
	admitted int       // jobs this replica created for the owner since readAt
	inflight int       // admissions whose creation has not finished
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
}

func newLimiter(defaults Limits, owners map[string]Limits, refresh time.Duration, count LiveCounter) *limiter {
	if refresh <= 0 {
		refresh = time.Second
	}
	return &limiter{defaults: defaults, owners: owners, refresh: refresh, count: count, now: time.Now, per: map[string]*ownerLimit{}}
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
// until a request would be allowed. A refusal takes no token: AllowN decides
// and takes in one step. (Taking a token with ReserveN and handing it back
// with CancelAt does not work under concurrency: CancelAt gives back only what
// no later reservation has built on, so overlapping refusals drove the bucket
// ever further below zero, and the owner's Retry-After with it.)
func (l *limiter) allow(owner string) (ok bool, retryAfter time.Duration, lim Limits) {
	o := l.of(owner)
	if o.rate == nil {
		return true, 0, o.lim
	}
	now := time.Now()
	if o.rate.AllowN(now, 1) {
		return true, 0, o.lim
	}
	return false, o.rateWait(now), o.lim
}

// over reports whether owner's rate would refuse a request now, and then how
// long until one would be allowed, without taking a token: withOwner asks it
// before the request's body is read, so an owner past its rate is refused at
// once (its body unread), while a request it lets through takes its token in
// allow, after its body (a request refused for its body takes none).
func (l *limiter) over(owner string) (over bool, retryAfter time.Duration, lim Limits) {
	o := l.of(owner)
	if o.rate == nil {
		return false, 0, o.lim
	}
	now := time.Now()
	if o.rate.TokensAt(now) >= 1 {
		return false, 0, o.lim
	}
	return true, o.rateWait(now), o.lim
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
// the owner is at its limit, ok is false and max is the limit.
//
// The owner is admitted only while the count's upper bound — the last read,
// plus this replica's admissions since, in flight or done — is below the
// limit, so one replica never takes it above the limit. That bound may count
// a job twice when the read overlapped its creation (uncertain, overlap): at
// the limit, such a count waits for the overlapping creations to end and is
// read again before the owner is refused, so it is not refused below its
// limit on a guess.
func (l *limiter) admitLive(ctx context.Context, owner string) (done func(created bool), ok bool, limit int, err error) {
	o := l.of(owner)
	if o.lim.MaxLiveJobs <= 0 || l.count == nil {
		return func(bool) {}, true, 0, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	read := func() error {
		n, err := l.count.CountLiveJobs(ctx, owner)
		if err != nil {
			return err
		}
		// Every creation in flight now may or may not be in n.
		o.counted, o.readAt, o.admitted, o.uncertain, o.overlap = n, l.now(), 0, 0, o.inflight
		o.reads++
		return nil
	}
	if o.readAt.IsZero() || l.now().Sub(o.readAt) >= l.refresh {
		if err := read(); err != nil {
			return nil, false, 0, err
		}
	}
	var waitUntil time.Time
	for o.counted+o.admitted+o.inflight+o.uncertain >= o.lim.MaxLiveJobs {
		if o.uncertain == 0 && o.overlap == 0 {
			return nil, false, o.lim.MaxLiveJobs, nil // nothing counted twice
		}
		if o.overlap > 0 {
			// Creations in flight during the last read may be counted
			// twice until they end: wait for them, then read again.
			if waitUntil.IsZero() {
				waitUntil = time.Now().Add(maxOverlapWait)
			}
			ended, err := o.waitOverlap(ctx, waitUntil)
			if err != nil {
				return nil, false, 0, err
			}
			if !ended {
				return nil, false, o.lim.MaxLiveJobs, nil
			}
			continue // the lock was let go: the counts may have changed
		}
		// A job created during the last read may be counted twice: read
		// again before refusing, never below the limit on a guess.
		if err := read(); err != nil {
			return nil, false, 0, err
		}
	}
	o.inflight++
	readsAtAdmission := o.reads
	var once sync.Once
	return func(created bool) {
		once.Do(func() {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.inflight--
			if o.reads != readsAtAdmission {
				// In flight at the last read: one overlapping creation
				// fewer.
				o.overlap--
				if o.overlap == 0 && o.overlapDone != nil {
					close(o.overlapDone)
					o.overlapDone = nil
				}
			}
			switch {
			case !created:
			case o.reads != readsAtAdmission:
				// The count was read while this job was being created:
				// whether that read saw the job depends on whether its
				// commit came first, so adding it to admitted could count
				// it twice (refusing the owner below its limit until the
				// next read). It is uncertain: counted, but a refusal at
				// the limit reads again first. (Reading again at the
				// next admission instead made every admission read while
				// creations overlapped: the refresh interval never held.)
				o.uncertain++
			default:
				o.admitted++
			}
		})
	}, true, 0, nil
}

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

func liveDetail(owner string, limit int) string {
	return fmt.Sprintf("owner %s already has %d or more jobs that are pending, running or unknown (limits.max_live_jobs is %d); nothing was stored: retry later with the same Idempotency-Key, once some have finished (or cancel or resolve them)",
		owner, limit, limit)
}

// admitLive applies max_live_jobs to a request about to create nj. done (never
// nil when err is nil) must be called with whether a job was created. refused
// says the owner is at its limit: answer 429 with liveDetail. A replay of a
// key that already holds a job is never refused: only then, on the refusal
// path, is the key looked up (replayable says the key is the caller's own).
// Such a request is admitted as a replay only (nj.ReplayOnly): should the
// key's retention pass before its claim, CreateJob creates nothing and
// returns store.ErrReplayKeyReleased, answered as this refusal
// (liveRefusedAtClaim), so the exemption can never create a job.
func (s *Server) admitLive(r *http.Request, nj *store.NewJob, replayable bool) (done func(created bool), refused int, err error) {
	done, ok, limit, err := s.limits.admitLive(r.Context(), nj.Owner)
	if err != nil || ok {
		return done, 0, err
	}
	if replayable {
		held, err := s.Store.KeyHeld(r.Context(), nj.Owner, nj.Operation, nj.IdempotencyKey)
		if err != nil {
			return nil, 0, err
		}
		if held {
			nj.ReplayOnly = true
			return func(bool) {}, 0, nil
		}
	}
	return func(bool) {}, limit, nil
}

// liveRefusedAtClaim reports whether err is CreateJob's refusal of a request
// admitted past max_live_jobs only as a replay whose key held no job any more
// when it was claimed (store.ErrReplayKeyReleased): nothing was stored, and it
// is answered as the limit's refusal, with limit the owner's max_live_jobs.
func (s *Server) liveRefusedAtClaim(owner string, err error) (limit int, refused bool) {
	if !errors.Is(err, store.ErrReplayKeyReleased) {
		return 0, false
	}
	return s.limits.of(owner).lim.MaxLiveJobs, true
}

// writeLiveRefused answers POST /v1/jobs refused by max_live_jobs.
func (s *Server) writeLiveRefused(w http.ResponseWriter, r *http.Request, owner string, limit int) {
	s.setRetryAfterLive(w)
	writeProblem(w, r, problem{Status: http.StatusTooManyRequests, Type: "too-many-live-jobs", Title: "Too many live jobs",
		Detail: liveDetail(owner, limit), Extra: map[string]any{"limit": "max_live_jobs"}})
}

// chatLiveRefusedAtClaim answers a chat completion whose claim CreateJob
// refused as liveRefusedAtClaim says, as the chat endpoint's max_live_jobs
// refusal, and reports whether it did.
func (s *Server) chatLiveRefusedAtClaim(w http.ResponseWriter, owner string, err error) bool {
	limit, refused := s.liveRefusedAtClaim(owner, err)
	if refused {
		s.writeChatLiveRefused(w, owner, limit)
	}
	return refused
}

// writeChatLiveRefused answers a chat completion refused by max_live_jobs.
func (s *Server) writeChatLiveRefused(w http.ResponseWriter, owner string, limit int) {
	s.setRetryAfterLive(w)
	writeOpenAIError(w, http.StatusTooManyRequests, "requests", "max_live_jobs_exceeded", "", liveDetail(owner, limit))
}

// setRetryAfterLive sets Retry-After on a max_live_jobs refusal: the live count
// is read again after the refresh interval.
func (s *Server) setRetryAfterLive(w http.ResponseWriter) {
	w.Header().Set("Retry-After", retryAfterSeconds(s.limits.refresh))
}
