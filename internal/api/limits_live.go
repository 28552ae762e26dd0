package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/routerhq/router/internal/store"
)

// liveDone ends an admission of max_live_jobs: it must be called once the
// job's creation has ended, saying whether a job was created (later calls do
// nothing). It returns ended, to call when this replica sees that job reach a
// terminal state: the job is then no longer counted against its owner.
type liveDone func(created bool) (ended func())

// noLiveSlot is the liveDone of an admission that reserved nothing.
func noLiveSlot(bool) func() { return func() {} }

// liveSlot is one admission of max_live_jobs (limiter.admit).
type liveSlot struct {
	o                *ownerLimit
	key              string // liveKey of the request, "" for none
	readsAtAdmission uint64
	once             sync.Once
	// Set by done under o.mu: the term that counts the created job
	// (o.admitted or o.uncertain) as of read readsAtDone; nil when no job
	// was created, or once ended has taken it off.
	counted     *int
	readsAtDone uint64
}

func (s *liveSlot) done(created bool) func() {
	s.once.Do(func() {
		o := s.o
		o.mu.Lock()
		defer o.mu.Unlock()
		o.inflight--
		o.landKey(s.key, created)
		overlapped := o.reads != s.readsAtAdmission
		if overlapped {
			// In flight at the last read: one overlapping creation fewer.
			o.overlap--
			if o.overlap == 0 && o.overlapDone != nil {
				close(o.overlapDone)
				o.overlapDone = nil
			}
		}
		if created && o.reading != nil {
			// Its job committed while the count is being read: the read
			// may or may not see it (readCount counts it as uncertain).
			o.reading.created++
		}
		switch {
		case !created:
		case overlapped:
			// The count was read while this job was being created:
			// whether that read saw the job depends on whether its commit
			// came first, so adding it to admitted could count it twice
			// (refusing the owner below its limit until the next read). It
			// is uncertain: counted, but a refusal at the limit reads again
			// first. (Reading again at the next admission instead made
			// every admission read while creations overlapped: the refresh
			// interval never held.)
			o.uncertain++
			s.counted = &o.uncertain
		default:
			o.admitted++
			s.counted = &o.admitted
		}
		s.readsAtDone = o.reads
	})
	return s.ended
}

// ended takes the slot's job, which has reached a terminal state, off its
// owner's count: exactly when it was created after the last read of the count
// (it is counted only as this replica's own), and otherwise by having the
// next refusal at the limit read the count again (that read may have counted
// it while it was live).
func (s *liveSlot) ended() {
	o := s.o
	o.mu.Lock()
	defer o.mu.Unlock()
	if s.counted == nil {
		return
	}
	if o.reads == s.readsAtDone && *s.counted > 0 {
		*s.counted--
	}
	if o.reads != s.readsAtDone || s.counted == &o.uncertain {
		o.endedUnread = true
	}
	if o.reading != nil {
		o.reading.ended = true // the read in progress may count it
	}
	s.counted = nil
}

// liveKey is how the limiter names a request's idempotency key.
func liveKey(operation, key string) string { return operation + "\x00" + key }

// flyKey records an admission under key in flight (o.mu held).
func (o *ownerLimit) flyKey(key string) {
	if key == "" {
		return
	}
	if o.keys == nil {
		o.keys = map[string]*keyFlight{}
	}
	f := o.keys[key]
	if f == nil {
		f = &keyFlight{}
		o.keys[key] = f
	}
	o.replays -= f.replays()
	f.n++
	o.replays += f.replays()
}

// landKey records that an admission under key has ended, having created the
// key's job or not (o.mu held).
func (o *ownerLimit) landKey(key string, created bool) {
	f := o.keys[key]
	if key == "" || f == nil {
		return
	}
	o.replays -= f.replays()
	if f.n--; f.n == 0 {
		if f.done != nil {
			close(f.done)
		}
		delete(o.keys, key)
		return
	}
	f.created = f.created || created
	o.replays += f.replays()
}

// recheck is the shortest time between a read of an owner's count and
// another that a refusal makes because counted jobs may have ended
// (mayHaveEnded): a tenth of the refresh interval.
func (l *limiter) recheck() time.Duration { return max(l.refresh/10, time.Millisecond) }

// mayHaveEnded reports whether jobs counted against the owner at its limit
// may have ended since the last read, and that read is at least recheck old
// (o.mu held): this replica has created jobs since (whose ends it may not
// have seen: the caller did not wait), or saw a job end that the read may
// have counted.
func (o *ownerLimit) mayHaveEnded(l *limiter) bool {
	return (o.admitted > 0 || o.endedUnread) && l.now().Sub(o.readAt) >= l.recheck()
}

// liveRefusal is a refusal by max_live_jobs, with the count it was refused on.
type liveRefusal struct {
	limit    int
	counted  int           // live jobs in the database at the last read
	readAgo  time.Duration // how long before the refusal that read was
	since    int           // jobs this replica created since, not seen to end
	creating int           // this replica's creations in flight
	refresh  time.Duration // the refresh interval of the count
	// keyBusy, when not nil, is closed once this replica's admissions under
	// the request's key have ended: its job may be theirs.
	keyBusy <-chan struct{}
	keyed   bool // the request has the caller's own Idempotency-Key
	atClaim bool // let through as a replay whose key's retention then ended
	// inDB: admitted by this replica's count but refused by the database's
	// (store.ErrLiveLimit), which counts every replica's jobs.
	inDB bool
}

// refusal is the refusal of a request under key on o's count (o.mu held).
func (o *ownerLimit) refusal(l *limiter, key string) *liveRefusal {
	r := &liveRefusal{limit: o.lim.MaxLiveJobs, counted: o.counted, readAgo: l.now().Sub(o.readAt),
		since: o.admitted + o.uncertain, creating: o.creating(), refresh: l.refresh}
	if f := o.keys[key]; key != "" && f != nil {
		if f.done == nil {
			f.done = make(chan struct{})
		}
		r.keyBusy = f.done
	}
	return r
}

// detail is the refusal's detail for owner: the count it stands on, as this
// replica holds it.
func (r *liveRefusal) detail(owner string) string {
	retry := "retry later"
	if r.keyed {
		retry = "retry later with the same Idempotency-Key"
	}
	if r.inDB {
		return fmt.Sprintf("owner %s is at its limit of live jobs (limits.max_live_jobs is %d): the database counted %d or more pending, running or unknown jobs of the owner, created through any router replica, when this request's job was to be created; nothing was stored: %s, once some have finished (or cancel or resolve them)",
			owner, r.limit, r.limit, retry)
	}
	if r.atClaim {
		return fmt.Sprintf("owner %s was at its limit of live jobs (limits.max_live_jobs is %d) when this request was checked, so it was let through only to replay the job its Idempotency-Key held, whose retention ended before the replay; nothing was stored: %s, once some of the owner's jobs have finished (or cancel or resolve them)",
			owner, r.limit, retry)
	}
	d := fmt.Sprintf("owner %s is at its limit of live jobs (limits.max_live_jobs is %d) as this router replica counts them: %d pending, running or unknown at its last read of the count (%s ago), and %d that it created since or is creating now and has not seen end (a job that ended without this replica seeing it is taken off at the next read, by a request %s or more after the last); nothing was stored: %s, once some have finished (or cancel or resolve them)",
		owner, r.limit, r.counted, r.readAgo.Round(time.Millisecond), r.since+r.creating, r.refresh, retry)
	switch {
	case r.keyBusy != nil:
		d += ". A request with this Idempotency-Key is still creating its job on this replica: resend this request with the same key to get that job"
	case r.keyed:
		d += ". If a request with this Idempotency-Key is still creating its job on another router replica, resending this request with the same key gets that job"
	}
	return d
}

// maxKeyWait bounds how long a request refused at the limit waits for this
// replica's admissions under its own key to end (their job may be its own: a
// duplicate sent while the first is being created). Each is a plan and a
// creation, a few round trips to the database; the wait holds no lock and no
// connection. Past it the request is refused, its detail saying to resend.
const maxKeyWait = 5 * time.Second

// admitLive applies max_live_jobs to a request about to create nj. done
// (never nil when err is nil and refused is nil) must be called with whether a
// job was created. refused says the owner is at its limit: answer 429 with
// its detail. waited says the request waited for an admission under its key
// (maxKeyWait): its API key must then be checked again before anything is
// created (recheckKeyAfterWait). A replay of a key that already holds a job is
// never refused: only then, on the refusal path, is the key looked up
// (replayable says the key is the caller's own). Such a request is admitted
// as a replay only (nj.ReplayOnly): should the key's retention pass before its claim,
// CreateJob creates nothing and returns store.ErrReplayKeyReleased, answered
// as this refusal (liveRefusedAtClaim), so the exemption can never create a
// job. Nor is a duplicate refused while the request it duplicates is being
// created on this replica: it waits for that admission to end (maxKeyWait),
// then is admitted again, or as the replay it now is.
func (s *Server) admitLive(r *http.Request, nj *store.NewJob, replayable bool) (done liveDone, refused *liveRefusal, waited bool, err error) {
	ctx := r.Context()
	if lim := s.limits.of(nj.Owner).lim.MaxLiveJobs; lim > 0 && s.limits.count != nil {
		// The database's check, the authority across replicas (CreateJob
		// refuses with store.ErrLiveLimit: liveRefusedAtClaim); the
		// limiter below only refuses early, on this replica's count.
		nj.MaxLive = lim
	}
	key := ""
	if replayable {
		key = liveKey(nj.Operation, nj.IdempotencyKey)
	}
	var waitUntil time.Time
	for {
		done, refused, err := s.limits.admit(ctx, nj.Owner, key)
		if err != nil || refused == nil {
			return done, nil, waited, err
		}
		if !replayable {
			return nil, refused, false, nil
		}
		refused.keyed = true
		if refused.keyBusy != nil {
			if waitUntil.IsZero() {
				waitUntil = time.Now().Add(maxKeyWait)
			}
			ended, err := s.limits.waitKey(ctx, refused.keyBusy, waitUntil)
			if err != nil {
				return nil, nil, false, err
			}
			waited = true
			if ended {
				continue // admitted again, or refused and then a replay
			}
		}
		held, err := s.Store.KeyHeld(ctx, nj.Owner, nj.Operation, nj.IdempotencyKey)
		if err != nil {
			return nil, nil, false, err
		}
		if held {
			nj.ReplayOnly = true
			return noLiveSlot, nil, waited, nil
		}
		return nil, refused, waited, nil
	}
}

// recheckKeyAfterWait checks r's API key again after admitLive waited for an
// admission under the request's Idempotency-Key (up to maxKeyWait): a key
// revoked during that wait must not create a job (SPEC §16), as one revoked
// while the body arrived (checkKeyAfterBody). The caller gives its admission
// back before answering a refusal.
func (s *Server) recheckKeyAfterWait(w http.ResponseWriter, r *http.Request) *keyRefusal {
	return s.recheckKey(w, r, "while this request waited for the request with the same Idempotency-Key (max_live_jobs)")
}

// waitKey waits until busy is closed (ended), until, or until ctx ends (its
// error). The test hook keyWait, when set, is told first.
func (l *limiter) waitKey(ctx context.Context, busy <-chan struct{}, until time.Time) (ended bool, err error) {
	d := time.Until(until)
	if d <= 0 {
		return false, nil
	}
	if hook := l.keyWait.Load(); hook != nil {
		(*hook)()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-busy:
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// liveRefusedAtClaim reports whether err is CreateJob's refusal of a request
// admitted past max_live_jobs only as a replay whose key held no job any more
// when it was claimed (store.ErrReplayKeyReleased): nothing was stored, and it
// is answered as the limit's refusal. So is the database's own refusal by
// max_live_jobs (store.ErrLiveLimit), after which this replica reads the
// owner's count again at its next admission (its own was behind: jobs other
// replicas created).
func (s *Server) liveRefusedAtClaim(owner string, err error, keyed bool) (refused *liveRefusal, ok bool) {
	var limitErr *store.LiveLimitError
	if errors.As(err, &limitErr) {
		o := s.limits.of(owner)
		o.mu.Lock()
		o.forgetCount()
		o.mu.Unlock()
		return &liveRefusal{limit: limitErr.Limit, keyed: keyed, inDB: true}, true
	}
	if !errors.Is(err, store.ErrReplayKeyReleased) {
		return nil, false
	}
	return &liveRefusal{limit: s.limits.of(owner).lim.MaxLiveJobs, keyed: true, atClaim: true}, true
}

// writeLiveRefused answers POST /v1/jobs refused by max_live_jobs.
func (s *Server) writeLiveRefused(w http.ResponseWriter, r *http.Request, owner string, refused *liveRefusal) {
	s.setRetryAfterLive(w)
	writeProblem(w, r, problem{Status: http.StatusTooManyRequests, Type: "too-many-live-jobs", Title: "Too many live jobs",
		Detail: refused.detail(owner), Extra: map[string]any{"limit": "max_live_jobs"}})
}

// chatLiveRefusedAtClaim answers a chat completion whose claim CreateJob
// refused as liveRefusedAtClaim says, as the chat endpoint's max_live_jobs
// refusal, and reports whether it did.
func (s *Server) chatLiveRefusedAtClaim(w http.ResponseWriter, owner string, err error, keyed bool) bool {
	refused, ok := s.liveRefusedAtClaim(owner, err, keyed)
	if ok && refused.inDB {
		w.Header().Del("X-Should-Retry") // nothing was stored: as the limiter's own refusal
	}
	if ok {
		s.writeChatLiveRefused(w, owner, refused)
	}
	return ok
}

// writeChatLiveRefused answers a chat completion refused by max_live_jobs.
func (s *Server) writeChatLiveRefused(w http.ResponseWriter, owner string, refused *liveRefusal) {
	s.setRetryAfterLive(w)
	writeOpenAIError(w, http.StatusTooManyRequests, "requests", "max_live_jobs_exceeded", "", refused.detail(owner))
}

// setRetryAfterLive sets Retry-After on a max_live_jobs refusal: the live count
// is read again after the refresh interval.
func (s *Server) setRetryAfterLive(w http.ResponseWriter) {
	w.Header().Set("Retry-After", retryAfterSeconds(s.limits.refresh))
}
