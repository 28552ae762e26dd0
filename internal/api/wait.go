package api

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/routerhq/router/internal/store"
)

// settled: nothing more will happen to the job without outside action — it is
// terminal, or unknown (waiting on a resolution).
func settled(state string) bool { return store.IsTerminal(state) || state == store.JobUnknown }

// waitFor reads `Prefer: wait=N` (RFC 7240), capped at the configured maximum.
// It returns the wait and the Preference-Applied value to send ("" for none).
func (s *Server) waitFor(r *http.Request) (time.Duration, string) {
	wait := s.cfg.DefaultWait
	if d, ok := preferredWait(r.Header.Values("Prefer")); ok {
		wait = d
	}
	if wait > s.cfg.MaxWait {
		wait = s.cfg.MaxWait
	}
	if wait <= 0 {
		return 0, ""
	}
	return wait, "wait=" + strconv.Itoa(int(wait/time.Second))
}

// preferredWait finds the wait preference among the values of the request's
// Prefer headers, in order. Only the first instance counts (RFC 7240 §2: a
// preference given more than once is considered once, and the later
// instances are ignored). ok is false when there is none, or when the first
// is unusable (not a whole number of seconds), which is ignored as RFC 7240
// says. A comma or semicolon inside a quoted value (foo="a,wait=1") is part
// of that value, not a separator (RFC 9110 §5.6.4).
func preferredWait(values []string) (d time.Duration, ok bool) {
	for _, h := range values {
		for rest, more := h, true; more; {
			var pref string
			pref, rest, more = cutUnquoted(rest, ',')
			pref, _, _ = cutUnquoted(pref, ';') // its parameters: wait has none
			name, val, _ := strings.Cut(pref, "=")
			if strings.EqualFold(strings.TrimSpace(name), "wait") {
				return seconds(unquote(strings.TrimSpace(val)))
			}
		}
	}
	return 0, false
}

// cutUnquoted is strings.Cut at the first sep outside a quoted-string
// (RFC 9110 §5.6.4: between double quotes, where a backslash escapes the
// character after it).
func cutUnquoted(s string, sep byte) (before, after string, found bool) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++ // the escaped character
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// unquote is a quoted-string's value (its escapes undone), or v as it is
// when not quoted.
func unquote(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	v = v[1 : len(v)-1]
	if strings.IndexByte(v, '\\') < 0 {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// seconds reads a delta-seconds value (RFC 7240 §4.3, RFC 9111 §1.2.2:
// digits only). A number of seconds too large for a time.Duration is the
// longest one, which the caller caps, rather than a product that overflows.
func seconds(v string) (time.Duration, bool) {
	n, ok := plainDigits(v)
	if !ok {
		return 0, false
	}
	if n > math.MaxInt64/int64(time.Second) {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(n) * time.Second, true
}

// waitJob waits until owner's job is settled or the wait runs out, and returns
// it as last read. It is woken by the database's notifications, so it works for
// jobs run by any replica.
func (s *Server) waitJob(ctx context.Context, owner, id string, wait time.Duration) (*store.Job, error) {
	changed, unsubscribe := s.Listener.Subscribe(id)
	defer unsubscribe()
	return s.waitSubscribed(ctx, owner, id, wait, changed, false)
}

// waitSubscribed is waitJob for a caller that subscribed to the job's changes
// itself; fresh says the job is known to be unsettled (just created), so the
// first read can be skipped. While waiting nothing is read when a change
// announces a final state (succeeded, cancelled: always announced with it); any
// other announcement may be older than the last read (announcements of other
// replicas arrive late) and is checked by reading the state. The whole job is
// read once, at the end — unless this replica's win announced it whole
// (Listener.PublishJob), as it does for a job whose only attempt won.
//
// Reads of the state go through Store.WatchJob (watchJob), which asks for the
// job's win to be announced by NOTIFY (wins of jobs nobody watches are not:
// the job's runner announces them in memory on its own replica); a job whose
// row another transaction holds for long is read plainly and flagged at a
// later re-read (watchJob). A waiter does not
// watch a job that runs on this replica (a fresh job, or one the executor
// says it runs, asked after subscribing): if this replica's runner lets it go
// unsettled it says so in memory (an announcement without a state), and from
// then on the waiter watches it like any other. The job is also read every
// Config.RecheckEvery — a plain read unless it still has to be watched, so a
// slow provider call does not make its win notify, and a watched job is
// flagged once.
func (s *Server) waitSubscribed(ctx context.Context, owner, id string, wait time.Duration, changed <-chan string, fresh bool) (*store.Job, error) {
	// One timer serves both the recheck and the end of the wait (it fires at
	// whichever comes first), rather than a context with a deadline beside a
	// recheck timer: a timer, a context and its registration with the
	// request's context less per waiting request (1% of the router's CPU).
	deadline := time.Now().Add(wait)
	state := ""
	if fresh {
		state = store.JobRunning
	}
	watch, watched := !fresh && !s.runsHere(id), false
	var timer *time.Timer
	for {
		if state == "" {
			var err error
			answered := true
			if watch && !watched { // once flagged, the job stays watched
				state, watched, answered, err = s.watchJob(ctx, owner, id, deadline)
			} else {
				state, answered, err = s.readState(ctx, owner, id, deadline)
			}
			if !answered {
				break // the caller left, Drain, or the wait ran out before the read answered
			}
			if err != nil {
				return nil, err
			}
		}
		if settled(state) {
			break
		}
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		if timer == nil {
			timer = time.NewTimer(min(s.cfg.RecheckEvery, left))
			defer timer.Stop()
		}
		select {
		case v := <-changed:
			if v == "" {
				watch = true // this replica let the job go, or the listener reconnected
			}
			state = store.FinalState(v)
			continue
		case <-timer.C:
			if left = time.Until(deadline); left > 0 {
				timer.Reset(min(s.cfg.RecheckEvery, left))
				state = "" // read it
				continue
			}
		case <-ctx.Done():
		case <-s.drain.ch: // shutting down: answer with the job as it stands
		}
		break
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // the caller left: no one to answer, nothing to read
	}
	if j := s.Listener.Job(id); j != nil && j.Owner == owner {
		return j, nil // announced whole by the win on this replica: no read
	}
	j, answered, err := detachedRead(ctx, nil, time.Now().Add(finalReadWait), func(rctx context.Context) (*store.Job, error) {
		return s.Store.GetJob(rctx, owner, id)
	})
	switch {
	case answered:
		return j, err
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, errFinalReadBusy
}

// readState is waitSubscribed's plain read of the job's state (detachedRead):
// answered is false when the caller left, Drain was called or the wait's
// deadline passed before the read answered.
func (s *Server) readState(ctx context.Context, owner, id string, deadline time.Time) (state string, answered bool, err error) {
	return detachedRead(ctx, s.drain.ch, deadline, func(rctx context.Context) (string, error) {
		return s.Store.JobState(rctx, owner, id)
	})
}

// detachedRead runs read, a short read of the database, on a context without
// ctx's cancellation (see watchJob: a read in flight is never cancelled for
// the caller's sake) and waits for its answer — but no longer than ctx lasts,
// than Drain is called (drain; nil: not watched) or than until (zero: no
// limit). A read waits for a connection of the pool first, and with every
// connection in use that wait has no end of its own: the waiter must not
// wait with it. answered is false when it stopped waiting; the read then goes
// on by itself, within detachedReadBound, and its answer is dropped.
func detachedRead[T any](ctx context.Context, drain <-chan struct{}, until time.Time, read func(context.Context) (T, error)) (v T, answered bool, err error) {
	type result struct {
		v        T
		err      error
		panicked any
	}
	done := make(chan result, 1) // the read never blocks on a waiter that left
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{panicked: fmt.Sprintf("%v\n%s", p, debug.Stack())}
			}
		}()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), detachedReadBound)
		defer cancel()
		v, err := read(rctx)
		done <- result{v: v, err: err}
	}()
	var expired <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		expired = t.C
	}
	select {
	case r := <-done:
		if r.panicked != nil {
			panic(r.panicked) // the handler's recovery logs it, as if read here
		}
		return r.v, true, r.err
	case <-ctx.Done():
	case <-drain:
	case <-expired:
	}
	return v, false, nil
}

// detachedReadBound bounds a read left to go on by itself (detachedRead):
// its wait for a connection of the pool, and the statement, which takes
// milliseconds unless the database is in trouble.
const detachedReadBound = 30 * time.Second

// finalReadWait is how long a waiter whose wait ended (its deadline, Drain)
// waits for the last read of its job; past it the request is answered
// errFinalReadBusy.
const finalReadWait = 3 * time.Second

// errFinalReadBusy: the wait ended but its last read of the job got no
// answer within finalReadWait — every connection of the router's database
// pool in use (or the database slow to answer). It wraps
// context.DeadlineExceeded (store.Unavailable: a 503 to retry shortly, where
// it is not answered as busy).
var errFinalReadBusy = fmt.Errorf("the job could not be read within %s (every connection to the database in use, or the database slow to answer): %w",
	finalReadWait, context.DeadlineExceeded)

// watchJob reads the job's state for waitSubscribed and flags it watched
// (Store.WatchJob); watched says whether it is. The flag's update waits for
// the job's row, which another transaction may hold for long (an operator's
// transaction left open in psql, a replica cut off in the middle of one): it
// waits up to the least of the wait's time left, Config.RecheckEvery and
// store.WatchLockWait, and no longer than the caller stays or the process
// runs undrained. Past that the job is not flagged and its state is read
// plainly (a read waits for no lock), so the waiter goes on — answered at its
// deadline, on Drain, or when it leaves — without holding a connection of the
// pool for as long as the row is held; its next re-read flags the job again.
//
// The plain reads take no cancellation from the caller (WithoutCancel): they
// are short, and cancelling a statement costs more than finishing it (a
// cancel request on a connection of its own, and the pool's connection may
// be lost). The waiter does not wait for them past its deadline, its
// caller's leaving or Drain, though (detachedRead): a read may first wait
// for a connection of the pool, for as long as all are in use. The flag's
// update takes the caller's and the drain's cancellation: it can wait for a
// row, and the bound on its lock wait ends it first otherwise. answered is
// false when the wait ended before the read answered.
func (s *Server) watchJob(ctx context.Context, owner, id string, deadline time.Time) (state string, watched, answered bool, err error) {
	bound := max(min(time.Until(deadline), s.cfg.RecheckEvery, store.WatchLockWait), time.Millisecond)
	// A backstop past the bound: lock_timeout ends the lock wait on the
	// database's side, which cancels nothing.
	wctx, cancel := context.WithTimeout(ctx, bound+watchBackstop)
	defer cancel()
	go func() {
		select {
		case <-s.drain.ch:
			cancel()
		case <-wctx.Done():
		}
	}()
	state, err = s.Store.WatchJobWaiting(wctx, owner, id, bound)
	if err == nil {
		return state, true, true, nil
	}
	if !store.Busy(err) && wctx.Err() == nil {
		return "", false, true, err
	}
	if ctx.Err() != nil || s.draining() {
		return "", false, false, nil // the wait is over: no read
	}
	state, answered, err = s.readState(ctx, owner, id, deadline)
	return state, false, answered, err
}

// watchBackstop is how long past its lock wait's bound watchJob's update may
// take before it is cancelled.
const watchBackstop = time.Second

// startAndWait hands a just-created job to the executor (subscribing to its
// changes first, so none is missed and the first read can be skipped) and waits
// up to wait for it to settle; an existing job is only waited for. It returns the
// job as it stands; err is set only when reading it failed.
func (s *Server) startAndWait(ctx context.Context, job *store.Job, created bool, wait time.Duration, plan store.JobPlan) (*store.Job, error) {
	if !created {
		if wait <= 0 || settled(job.State) {
			return job, nil
		}
		return s.waitJob(ctx, job.Owner, job.ID, wait)
	}
	if wait <= 0 {
		s.submitNew(ctx, job, plan)
		return job, nil
	}
	changed, unsubscribe := s.Listener.Subscribe(job.ID)
	defer unsubscribe()
	s.submitNew(ctx, job, plan)
	return s.waitSubscribed(ctx, job.Owner, job.ID, wait, changed, true)
}

// discard gives back what a plan holds when its job was not created.
func discard(plan store.JobPlan) {
	if plan != nil {
		plan.Discard()
	}
}

// runner is what an Executor that runs jobs in this process can tell.
type runner interface {
	// Runs reports whether this process runs the job now; until it stops,
	// it announces the job's changes in memory (see waitSubscribed).
	Runs(jobID string) bool
}

// runsHere reports whether this replica's executor runs the job now.
func (s *Server) runsHere(id string) bool {
	r, ok := s.Exec.(runner)
	return ok && r.Runs(id)
}
