package api

import (
	"context"
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
	return &limiter{defaults: defaults, owners: owners, refresh: refresh, count: count, per: map[string]*ownerLimit{}}
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
	wait := maxRateWait
	if secs := (1 - o.rate.TokensAt(now)) / float64(o.rate.Limit()); secs < maxRateWait.Seconds() {
		wait = max(time.Duration(secs*float64(time.Second)), minRateWait)
	}
	return false, wait, o.lim
}

// admitLive reserves one new live job for owner. When ok, done must be called
// once the job's creation has ended, saying whether a job was created. When
// the owner is at its limit, ok is false and max is the limit.
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
		o.counted, o.readAt, o.admitted, o.uncertain = n, time.Now(), 0, 0
		o.reads++
		return nil
	}
	if o.readAt.IsZero() || time.Since(o.readAt) >= l.refresh {
		if err := read(); err != nil {
			return nil, false, 0, err
		}
	}
	if o.counted+o.admitted+o.inflight+o.uncertain >= o.lim.MaxLiveJobs {
		if o.uncertain == 0 {
			return nil, false, o.lim.MaxLiveJobs, nil
		}
		// A job created during the last read may be counted twice: read
		// again before refusing, never below the limit on a guess.
		if err := read(); err != nil {
			return nil, false, 0, err
		}
		if o.counted+o.admitted+o.inflight >= o.lim.MaxLiveJobs {
			return nil, false, o.lim.MaxLiveJobs, nil
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
			return func(bool) {}, 0, nil
		}
	}
	return func(bool) {}, limit, nil
}

// setRetryAfterLive sets Retry-After on a max_live_jobs refusal: the live count
// is read again after the refresh interval.
func (s *Server) setRetryAfterLive(w http.ResponseWriter) {
	w.Header().Set("Retry-After", retryAfterSeconds(s.limits.refresh))
}
