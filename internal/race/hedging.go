package race

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// ttfbStats keeps each target's recent times to first byte in this process,
// for adaptive hedging. It is a heuristic, not a guarantee: each replica
// learns from its own attempts, and a restarted one starts without history.
//
// It learns from every attempt sent, not only from those that complete: a
// first byte counts when it arrives (ttfbProbe), and an attempt that ended
// without one counts as a wait of that long (a lower bound of its time to
// first byte). Without the waits, the attempts that hang — exactly those
// hedging is for — would never be counted and the p95 would drift low.
type ttfbStats struct {
	mu      sync.Mutex
	targets map[string]*ttfbRing
}

const (
	ttfbWindow  = 200 // samples kept per target
	ttfbMinimum = 10  // samples before the p95 is trusted
)

type ttfbRing struct {
	samples []ttfbSample
	next    int
	p95     time.Duration // cached; 0 when stale
	seq     uint64        // the last sample's seq
}

// ttfbSample is one attempt's time to first byte or, when censored, how long
// it waited without one (its time to first byte is longer still).
type ttfbSample struct {
	d        time.Duration
	censored bool
	// refusal: the "first byte" was an error status the provider answered
	// with (a 5xx, a 429, an error object in a 200 stream: refusedAnswer),
	// known once the call ended (markRefusal). Adaptive hedging counts it as
	// the time to first byte it is; it says nothing of how soon the target
	// answers a request, so answered (the loss bar) leaves it out.
	refusal bool
	seq     uint64 // names it for markRefusal (per target, from 1)
}

// add records an attempt's time to first byte, and returns its seq (0: not
// recorded).
func (s *ttfbStats) add(target string, d time.Duration) uint64 {
	return s.record(target, ttfbSample{d: d})
}

// addWait records that an attempt on target ended after waiting d without a
// response byte.
func (s *ttfbStats) addWait(target string, d time.Duration) {
	s.record(target, ttfbSample{d: d, censored: true})
}

func (s *ttfbStats) record(target string, sample ttfbSample) uint64 {
	if sample.d <= 0 {
		return 0 // nothing measured, or a wait that says nothing
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.targets == nil {
		s.targets = map[string]*ttfbRing{}
	}
	r := s.targets[target]
	if r == nil {
		r = &ttfbRing{}
		s.targets[target] = r
	}
	r.seq++
	sample.seq = r.seq
	if len(r.samples) < ttfbWindow {
		r.samples = append(r.samples, sample)
	} else {
		r.samples[r.next] = sample
		r.next = (r.next + 1) % ttfbWindow
	}
	r.p95 = 0
	return sample.seq
}

// markRefusal says that target's first byte seq was an error status
// (ttfbSample.refusal), if it is still among its samples.
func (s *ttfbStats) markRefusal(target string, seq uint64) {
	if seq == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.targets[target]
	if r == nil {
		return
	}
	for i := range r.samples {
		if r.samples[i].seq == seq {
			r.samples[i].refusal = true
			return
		}
	}
}

// p95 is the target's recent p95 time to first byte and whether there is
// enough history to trust it.
func (s *ttfbStats) p95(target string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.targets[target]
	if r == nil || len(r.samples) < ttfbMinimum {
		return 0, false
	}
	if r.p95 == 0 {
		r.p95 = p95Of(r.samples)
	}
	return r.p95, true
}

// p95Of is the samples' 95th percentile time to first byte by the
// Kaplan–Meier estimator, the usual one for times some of which are known
// only to be longer than a wait (censored). A wait is not taken as a time to
// first byte — an attempt cut early (a hedge that lost after 300 ms, a job
// cancelled at once) would pull the p95 down — but it leaves the attempts
// still waiting at its length, so the waits push the estimate up by what
// they show. Without waits it is the plain p95 (the ⌈0.95n⌉-th shortest).
//
// When fewer than 95% of the samples are known to have answered — more than
// 5% were still waiting when last seen — the p95 lies beyond every time
// observed: it is unbounded, and adaptiveDelay clamps it to hedge_max.
func p95Of(samples []ttfbSample) time.Duration {
	sorted := slices.Clone(samples)
	slices.SortFunc(sorted, func(a, b ttfbSample) int {
		if c := cmp.Compare(a.d, b.d); c != 0 {
			return c
		}
		// At a tie the answer comes first: a wait cut at d was still
		// waiting at d.
		switch {
		case a.censored == b.censored:
			return 0
		case b.censored:
			return -1
		}
		return 1
	})
	waiting := 1.0 // the estimated share of attempts with no first byte yet
	for i, s := range sorted {
		if s.censored {
			continue
		}
		waiting *= 1 - 1/float64(len(sorted)-i)
		if waiting <= 0.05+1e-9 { // the slack absorbs the product's rounding
			return s.d
		}
	}
	return math.MaxInt64
}

// ttfbKey names the times to first byte of target sending model (SPEC §15:
// statistics are per target, provider × model): the target's own id when
// model is its own (or "": the attempt sends the target's model), so that
// they are the target's; otherwise target and model, so that a route's
// `models` sending a slow reasoning model to the same provider as a fast one
// learns its own p95, as its breaker counts it apart (breakerOf).
func (r *Runner) ttfbKey(target, model string) string {
	if t := r.cfg.Targets[target]; model == "" || t == nil || model == t.Model {
		return target
	}
	return target + "\x00" + model
}

// sentModel is the model an attempt of the job on target sends (spec.modelOn).
func (o *orchestrator) sentModel(target string) string {
	if o.spec == nil {
		return ""
	}
	return o.spec.modelOn(o.r.cfg.Targets[target])
}

// ttfbProbe learns one call's time to first byte for its target: when the
// first byte arrives, so that an answer streamed for a long time (or never
// finished) counts as soon as it begins; or, for a call that ends without
// one, as a wait of that long.
type ttfbProbe struct {
	stats  *ttfbStats
	target string
	start  time.Time
	seen   atomic.Bool
	seq    atomic.Uint64 // the first byte's sample (ttfbStats.add)
}

// probeTTFB starts learning the time to first byte of the call made with the
// returned context. Call ended with the call's outcome.
func (r *Runner) probeTTFB(ctx context.Context, target string) (context.Context, *ttfbProbe) {
	p := &ttfbProbe{stats: &r.ttfb, target: target, start: time.Now()}
	return providers.OnFirstByte(ctx, p.firstByte), p
}

func (p *ttfbProbe) firstByte() {
	if p.seen.CompareAndSwap(false, true) {
		p.seq.Store(p.stats.add(p.target, time.Since(p.start)))
	}
}

// ended records what the call's end tells, when its first byte was not
// reported while it ran; when it was, and the call ended on an error status
// the provider answered with, that first byte was no answer's
// (ttfbSample.refusal).
func (p *ttfbProbe) ended(resp *providers.Response, err error) {
	if p.seen.Load() {
		if refusedAnswer(err) {
			p.stats.markRefusal(p.target, p.seq.Load())
		}
		return
	}
	var pe *providers.Error
	switch {
	case err == nil && resp != nil:
		// An adapter that does not report its first byte as it comes: its
		// own measure, or else the whole call (an upper bound).
		d := resp.FirstByte
		if d <= 0 {
			d = time.Since(p.start)
		}
		p.stats.add(p.target, d)
	case errors.As(err, &pe) && pe.NotSent:
		// The request never left the router: nothing to learn.
	case err != nil:
		// No first byte reported: none came, or only a stream's headers,
		// comments or pings did (providers.Deadlines.Stream) — either way
		// the answer had not begun after this long.
		p.stats.addWait(p.target, time.Since(p.start))
	}
}

// refusedAnswer says whether a call's error is an error status the provider
// answered with — a status outside 2xx, or an error object in a 200 stream
// before any of the answer (providers.Error.AnsweredWithError) — rather than
// an answer that failed once begun: its "first byte" began no answer.
func refusedAnswer(err error) bool {
	var pe *providers.Error
	if !errors.As(err, &pe) {
		return false
	}
	return pe.AnsweredWithError || pe.StatusCode != 0 && (pe.StatusCode < 200 || pe.StatusCode > 299)
}

// flight is one attempt in flight as the hedge clock sees it. A hedge is due
// for an attempt that has had no response byte for the hedge delay of its
// own target; one that has begun answering is not hedged, however long its
// answer takes: stream_idle_timeout and timeout watch it instead, and fail
// it (the job then fails over) if it stalls or overruns (SPEC §15).
type flight struct {
	target    string
	start     time.Time
	answering atomic.Bool   // its first response byte has come (set by the call)
	answered  chan struct{} // closed when answering is set (nil: never)
	due       time.Time     // when it is hedged if still silent; zero: not computed yet
	done      bool          // hedged, held or never to be hedged: it asks for nothing more
	// denied says its hedge was last denied by the route's hedge budget
	// (hedgeDue, holdExtra): it is asked for again as soon as a slot may have
	// been freed (budgetFreed), not only when due comes.
	denied bool
	// hedge is the id of the hedge attempt started for it ("": none yet).
	// Set by the orchestrator as it launches the hedge (hedgeDue).
	hedge string
	// hedgedAfter is how long it had been silent when a hedge was started
	// for it (ns; 0: none was). Set by the orchestrator, read by the
	// attempt's goroutine as it ends (silentPastHedge).
	hedgedAfter atomic.Int64
	// silentBar is the target's own hedge delay when the hedge was started
	// (ns): the route's hedge_after, or the adaptive estimate — before the
	// clamps to the job's remaining deadline and to a fixed delay's share of
	// the target's first-byte budget (hedgeDelay). Only a loser silent that
	// long is its target's failure (silentPastHedge): a late attempt hedged
	// sooner, because the job's time was running out, was not given the
	// time its target is expected to answer in, and is cut at the win,
	// excused. Set before hedgedAfter.
	silentBar atomic.Int64
	// lossBar is how long a loser silent past silentBar is kept running
	// after the win, and must stay silent, before its target is counted as
	// failed (ns; lossBar, keepLoser): silentBar, or more for a target
	// expected to answer later (twice its recent p95 time to first byte)
	// and for a half-open probe. Set before hedgedAfter.
	lossBar atomic.Int64
	// probe says the attempt was admitted as its breaker's half-open probe
	// (admittedProbe, as it was launched): its loss bar is at least its
	// first-byte budget, and once answering it is never cut as a loser
	// (lossBar, keep).
	probe atomic.Bool
	// mayHedge says the attempt's route hedges (mayHedge): only then can a
	// hedge be started for it, and only then does it need a loss bar, a
	// probe's reading and keeping as a loser (keepLoser).
	mayHedge bool
}

// silentPastHedge says whether a hedge was started for the attempt because it
// had no response byte for the hedge delay, and it still had none when it
// ended: it had then been silent at least as long as the delay that made the
// hedge (after, returned) and as long as its target's unclamped hedge delay
// (silentBar), and as long as its loss bar (lossBar: for a target that
// answers, twice its recent p95 time to first byte; a loser silent past
// silentBar is kept running until then, keepLoser). Such an attempt, cut
// because the hedge (or another attempt) won, is its target's failure (attemptResult.silentLoser). One hedged sooner
// — the delay cut to three quarters of what was left of the job's deadline,
// or of its target's first-byte budget — and cut before its target's own
// delay had passed is excused, as an attempt the job's deadline cut before
// its target had its chance is (excusedByDeadline).
func (f *flight) silentPastHedge() (after time.Duration, silent bool) {
	if f == nil {
		return 0, false
	}
	after = time.Duration(f.hedgedAfter.Load())
	bar := max(after, time.Duration(f.silentBar.Load()), time.Duration(f.lossBar.Load()))
	return after, after > 0 && !f.answering.Load() && time.Since(f.start) >= bar
}

// HedgeHeldObserver is an optional part of an Observer: it hears of each
// hedge that came due and was not started because the attempt in flight had
// begun answering (a hedge saved).
type HedgeHeldObserver interface {
	HedgeHeld(route string)
}

// watchFirstByte puts attempt a, about to be sent, on the hedge clock; the
// returned context, used for its call, tells the clock when the provider
// begins answering, and carries the job's deadline (withJobDeadline). The
// flight returned is the attempt's on the clock.
func (o *orchestrator) watchFirstByte(ctx context.Context, a *store.Attempt) (context.Context, *flight) {
	if o.flights == nil {
		o.flights = map[string]*flight{}
	}
	f := &flight{target: a.Provider, start: time.Now(), answered: make(chan struct{}), mayHedge: o.mayHedge()}
	if f.mayHedge {
		// Only a hedged attempt's loss bar and keeping read it (lossBar,
		// keep): a route that never hedges skips the breaker's lock.
		f.probe.Store(o.admittedProbe(a.Provider))
	}
	o.flights[a.ID] = f
	// The attempt's run also carries the job's deadline, which cuts its call
	// by itself (boundByJobDeadline) should this orchestration be busy then.
	ctx = withJobDeadline(ctx, o.deadlineAt)
	return providers.OnFirstByte(ctx, func() {
		if f.answering.CompareAndSwap(false, true) {
			close(f.answered)
		}
	}), f
}

// hedgeDelay is how long an attempt on target, started (or waiting again) at
// from, may go without a response byte before a hedge starts: fixed, or learnt
// from that target's recent times to first byte; 0: no hedging.
//
// Either way the hedge must be able to start. A fixed delay at or past the
// target's first-byte deadline is three quarters of it, as an adaptive one is
// (adaptiveDelay): a fixed hedge_after applies to every attempt in flight,
// and the configuration checks it only against the primary's deadline, so a
// failover to a target with a shorter first_byte_timeout would become
// `unknown` — blocking every new attempt — before its hedge was due. And no
// delay is more than three quarters of what is left, from from, of the job's
// deadline: a late attempt (after a failover, or in an adopted job) would
// otherwise be cut by the deadline before its hedge came.
func (o *orchestrator) hedgeDelay(target string, from time.Time) time.Duration {
	d := o.route.HedgeAfter
	if o.route.AdaptiveHedge {
		d = o.r.adaptiveDelaySent(target, o.sentModel(target), o.route)
	} else if deadline := o.r.cfg.Targets[target].firstByteBudget(); d > 0 && deadline > 0 && d >= deadline {
		d = threeQuarters(deadline)
	}
	if d > 0 && !o.deadlineAt.IsZero() {
		d = min(d, threeQuarters(o.deadlineAt.Sub(from)))
	}
	return d
}

// mayHedge says whether the job's route hedges at all: a fixed hedge_after or
// an adaptive one. Without either, hedgeDelay is 0 for every attempt and no
// hedge is ever started.
func (o *orchestrator) mayHedge() bool {
	return o.route.HedgeAfter > 0 || o.route.AdaptiveHedge
}

// targetHedgeDelay is the hedge delay of an attempt on target before any
// clamp: the route's hedge_after, or the adaptive estimate for target. It is
// the least silence that makes a hedged loser its target's failure
// (lossBar, silentBar).
func (o *orchestrator) targetHedgeDelay(target string) time.Duration {
	if o.route.AdaptiveHedge {
		return o.r.adaptiveDelaySent(target, o.sentModel(target), o.route)
	}
	return o.route.HedgeAfter
}

// waiting is the attempts in flight that may still ask for a hedge, their due
// times computed; it forgets the attempts that have ended.
func (o *orchestrator) waiting() []*flight {
	var out []*flight
	for id, f := range o.flights {
		if _, ok := o.inflight[id]; !ok {
			delete(o.flights, id)
			continue
		}
		if f.done {
			continue
		}
		if f.due.IsZero() {
			d := o.hedgeDelay(f.target, f.start)
			if d <= 0 {
				f.done = true
				continue
			}
			f.due = f.start.Add(d)
		}
		out = append(out, f)
	}
	return out
}

// armHedge (re)arms the hedge timer for the first hedge that could come due,
// when a hedge could be started then (while the runner drains: one that
// would end before the drain does). Not while the round's attempts have
// reached max_attempts (attemptLimitSpent): the store would refuse the hedge
// (store.ErrAttemptLimit), so none is asked for — of the route's hedge
// budget, or recorded as denied — and the attempts in flight run on alone.
// The timer is armed again should the count become unsure (an attempt that
// may no longer count ends: attemptCountUnsure), the store then deciding.
func (o *orchestrator) armHedge(_ context.Context, t *time.Timer) {
	t.Stop()
	if o.attemptLimitSpent() {
		o.hedgeClockActed()
		return
	}
	p := ""
	if o.canHedge() && len(o.inflight) > 0 && len(o.inflight) < o.route.MaxInflight {
		p = o.next()
	}
	if p == "" {
		return
	}
	var first *flight
	for _, f := range o.waiting() {
		if first == nil || f.due.Before(first.due) {
			first = f
		}
	}
	if first != nil && o.drainFits(p, first.due) {
		t.Reset(time.Until(first.due))
	}
}

// hedgeDue acts on the hedge timer. Of the attempts whose hedge came due, one
// that has begun answering is held (never hedged); the silent one due first
// is hedged on the next eligible target, if the race may take another attempt
// and the route's hedge budget allows it — else it is tried again a hedge
// delay later (hedgeAgain) or, denied by the budget, as soon as a slot of it
// may have been freed (budgetFreed). With the round's attempts at
// max_attempts it starts none and asks nothing (armHedge).
func (o *orchestrator) hedgeDue(ctx context.Context, timer *time.Timer) {
	defer o.hedgeClockActed() // after armHedge
	defer o.armHedge(ctx, timer)
	if o.attemptLimitSpent() {
		return // the store would refuse the hedge: not armed again while so (armHedge)
	}
	now := time.Now()
	var silent *flight
	for _, f := range o.waiting() {
		switch {
		case f.due.After(now):
		case f.answering.Load():
			f.done = true
			o.log.Debug("hedge not started: the attempt in flight has begun answering", "provider", f.target)
			if obs, ok := o.r.cfg.Observer.(HedgeHeldObserver); ok {
				obs.HedgeHeld(o.job.Route)
			}
		case silent == nil || f.due.Before(silent.due):
			silent = f
		}
	}
	p := o.next()
	if silent == nil || p == "" || !o.canHedge() || len(o.inflight) >= o.route.MaxInflight {
		return
	}
	if !o.drainFits(p, now) {
		// The runner drains and the hedge would outlast the drain: it never
		// will fit (the drain only gets shorter).
		silent.done = true
		return
	}
	if len(o.extras) < len(o.inflight) { // no slot held for this call yet
		if ok, why := o.acquireExtra(); !ok {
			o.denyHedge(ctx, p, deniedCall(store.RoleHedge, p, why))
			o.hedgeAgain(silent, now) // the budget may allow it later
			silent.denied = true
			return
		}
	}
	o.log.Info("hedging", "provider", p, "silent_provider", silent.target, "after", now.Sub(silent.start))
	// The silent attempt is marked hedged once the hedge's attempt exists
	// and is about to be sent, before its goroutine starts: a hedge that
	// wins at once is announced in memory, and the losers are cut
	// (watchCancel) without waiting for this goroutine — one read as never
	// hedged would be cut as an ordinary loser (a kept probe too, its
	// outcome ignored). Not sooner: a win by another attempt while the
	// hedge is being chosen or created (a breaker's admission, the row's
	// write) would cut the silent attempt as a hedged loser — kept to its
	// loss bar, then counted against its breaker — for a hedge that may
	// never start.
	markHedged := func(hedge *store.Attempt) {
		silent.hedge = hedge.ID
		silent.silentBar.Store(int64(o.targetHedgeDelay(silent.target)))
		silent.lossBar.Store(int64(o.lossBar(silent.target, silent.probe.Load())))
		silent.hedgedAfter.Store(int64(max(now.Sub(silent.start), 1)))
	}
	if !o.startThen(ctx, p, store.RoleHedge, markHedged) { // try again later
		o.hedgeAgain(silent, now)
		return
	}
	if f := hedgeStartedHook.Load(); f != nil {
		(*f)(o.job.ID)
	}
	silent.done = true
}

// hedgeStartedHook, set only by tests (nil otherwise), hears each hedge
// hedgeDue has started, before hedgeDue returns: a test can hold it there
// while the hedge's win is announced.
var hedgeStartedHook atomic.Pointer[func(jobID string)]

// hedgeClockHook, set only by tests (nil otherwise), hears each time the
// hedge clock has acted for a job (its id): a hedgeDue ended, its timer
// re-armed or not, or armHedge left the timer unarmed because the round's
// attempts reached max_attempts.
var hedgeClockHook atomic.Pointer[func(jobID string)]

func (o *orchestrator) hedgeClockActed() {
	if f := hedgeClockHook.Load(); f != nil {
		(*f)(o.job.ID)
	}
}

// holdExtra makes sure the job holds a slot of the route's hedge budget
// (extras) for an attempt of role on provider about to start beside those in
// flight: one slot per call in flight beyond the first. The budget bounds the
// calls a route's jobs make beyond one each, so an outage that makes every job
// hedge cannot double the traffic (SPEC §15): a slot is taken by a hedge
// (hedgeDue) and kept while the job has that many calls in flight
// (settleExtra) — also when the hedge's attempt fails at once and the race
// moves on to a failover or a retry beside the silent attempt, which inherits
// it. A retry or failover that starts a call beside others without a slot
// takes one here. Denied, the attempt does not start: a retry waits for an
// attempt to end or a budget slot to be freed (ready), and each silent
// attempt in flight whose hedge did not save it (none in flight) is hedged
// again as a denied hedge is (hedgeAgain, budgetFreed). The first call of a
// job never needs it.
//
// A failover never meets a denial here: it starts as an attempt ends, before
// anything else does in that step (handle), and inherits the ended call's
// slot, or is the job's only call.
func (o *orchestrator) holdExtra(ctx context.Context, provider, role string) bool {
	if len(o.extras) >= len(o.inflight) {
		return true // the first call, or a slot is held for this one
	}
	ok, why := o.acquireExtra()
	if ok {
		return true
	}
	o.denyHedge(ctx, provider, deniedCall(role, provider, why))
	if role == store.RoleRetry && !slices.Contains(o.ready, provider) {
		o.ready = append(o.ready, provider)
	}
	now := time.Now()
	for id, f := range o.flights {
		// Not one whose hedge is still in flight: it is hedged already.
		_, hedging := o.inflight[f.hedge]
		if _, ok := o.inflight[id]; ok && f.done && !f.answering.Load() && !hedging {
			f.done = false
			o.hedgeAgain(f, now)
			f.denied = true
		}
	}
	return false
}

// deniedCall is the reason a job's routing records (`"event": "hedge_denied"`,
// denyHedge) when the route's hedge budget denies the call of role on
// provider beside the job's others: which call was denied — a hedge, and
// also a retry or failover, each of which needs a slot as a hedge does
// (holdExtra) — then the budget's why (acquireOrWait). The event keeps its
// name for every role: the routing and router_hedges_denied_total have
// always counted the three under it.
func deniedCall(role, provider, why string) string {
	var call string
	switch role {
	case store.RoleRetry:
		call = "a retry on " + provider
	case store.RoleFailover:
		call = "a failover to " + provider
	case store.RoleHedge:
		call = "a hedge on " + provider
	default:
		call = "a " + role + " call to " + provider
	}
	return call + " was denied: " + why
}

// acquireExtra takes a slot of the route's hedge budget for a call beside the
// job's others (extras). Denied, the job waits for the budget's wake
// (budgetWake, budgetFreed): the budget signals one waiting job each time a
// slot may have been freed — a slot given back, or a job started on the route
// growing a percent budget — instead of each denied job asking again only
// when its own timer says.
func (o *orchestrator) acquireExtra() (ok bool, why string) {
	o.budgetAsks++
	var wake chan struct{}
	if !o.budgetWaiting { // else it is among the waiters already, or holds the signal
		if o.budgetWake == nil {
			o.budgetWake = make(chan struct{}, 1)
		}
		wake = o.budgetWake
	}
	release, ok, why := o.r.hedges.acquireOrWait(o.job.Route, o.route, wake)
	if !ok {
		o.budgetWaiting = true
		return false, why
	}
	o.extras = append(o.extras, release)
	return true, ""
}

// budgetWakeC is the channel that says a slot of the route's hedge budget
// may have been freed for the job; nil (never ready) while it waits for none.
func (o *orchestrator) budgetWakeC() <-chan struct{} {
	if !o.budgetWaiting {
		return nil
	}
	return o.budgetWake
}

// budgetFreed acts on the hedge budget's wake: the retries the budget denied
// (ready) and the hedges it denied (flight.denied) are asked for again now,
// as a hedge that came due is. The budget woke this job alone for the slot:
// when the job asked for none — nothing it waited for is wanted any more
// (the silent attempt answered, the job won) — the wake is passed on to the
// route's next waiting job, so the slot is not left unused.
func (o *orchestrator) budgetFreed(ctx context.Context, hedge *time.Timer) {
	o.budgetWaiting = false
	asks := o.budgetAsks
	o.startReady(ctx)
	now := time.Now()
	for _, f := range o.waiting() {
		if f.denied {
			f.denied = false
			f.due = now
		}
	}
	o.hedgeDue(ctx, hedge) // re-arms the hedge timer
	o.settleExtra()
	if o.budgetAsks == asks && !o.budgetWaiting {
		o.r.hedges.passOn(o.job.Route)
	}
}

// forgetBudgetWake takes the job, ending, off its route's hedge budget's
// waiters; a wake it was sent and did not act on goes to the next waiter.
func (o *orchestrator) forgetBudgetWake() {
	if o.budgetWaiting {
		o.r.hedges.forget(o.job.Route, o.budgetWake)
		o.budgetWaiting = false
	}
}

// hedgeAgain puts a silent attempt whose hedge did not start back on the
// hedge clock, a hedge delay from now (none left: never) — but never past
// three quarters of its target's first-byte budget from its start while that
// point is still ahead: the attempt goes `unknown` at the budget's end,
// blocking every new attempt, so a hedge tried again a whole hedge delay
// after a denial at (or after a start that failed near) the hedge delay —
// itself at most three quarters of the budget (hedgeDelay) — would never
// start. A hedge denied by the hedge budget is also asked for again as soon
// as a slot may have been freed (budgetFreed).
func (o *orchestrator) hedgeAgain(f *flight, now time.Time) {
	d := o.hedgeDelay(f.target, now)
	if d <= 0 {
		f.done = true
		return
	}
	f.due = now.Add(d)
	if fb := o.r.cfg.Targets[f.target].firstByteBudget(); fb > 0 {
		if last := f.start.Add(threeQuarters(fb)); last.After(now) && last.Before(f.due) {
			f.due = last
		}
	}
}

// settleExtra gives back the hedge budget slots the job holds beyond one per
// call in flight after its first.
func (o *orchestrator) settleExtra() {
	o.releaseExtraTo(max(len(o.inflight)-1, 0))
}

// releaseExtra gives back every slot the job holds.
func (o *orchestrator) releaseExtra() {
	o.releaseExtraTo(0)
}

func (o *orchestrator) releaseExtraTo(n int) {
	for len(o.extras) > n {
		last := len(o.extras) - 1
		o.extras[last]()
		o.extras = o.extras[:last]
	}
}

// adaptiveDelay is adaptiveDelaySent for an attempt that sends target's own
// model.
func (r *Runner) adaptiveDelay(target string, route *Route) time.Duration {
	return r.adaptiveDelaySent(target, "", route)
}

// adaptiveDelaySent is the recent p95 time to first byte of target sending
// model (ttfbKey: "" or the target's own model is the target's) clamped to
// the route's [HedgeMin, HedgeMax]; HedgeMax without history.
func (r *Runner) adaptiveDelaySent(target, model string, route *Route) time.Duration {
	lo, hi := route.HedgeMin, route.HedgeMax
	if lo <= 0 {
		lo = 2 * time.Second
	}
	if hi < lo {
		hi = max(lo, 10*time.Second)
	}
	d := hi
	if p95, ok := r.ttfb.p95(r.ttfbKey(target, model)); ok {
		d = min(max(p95, lo), hi)
	}
	// A hedge must start while the attempt still waits for its first byte:
	// once the target's first-byte deadline fires, the attempt is unknown
	// and blocks every new attempt, so a later hedge never starts and the
	// job waits for a resolution. That happens exactly when the target hangs
	// on more than 5% of its calls (the p95 is unbounded: hedge_max) and its
	// deadline is below hedge_max — the case hedging is for. Such a delay is
	// three quarters of the deadline instead, whatever hedge_min says.
	if deadline := r.cfg.Targets[target].firstByteBudget(); deadline > 0 && d >= deadline {
		d = threeQuarters(deadline)
	}
	return d
}

// hedgeBudgets bound each route's hedges in flight in this process, in the
// manner of Envoy's retry budget: at most max(MinConcurrent, Percent% of the
// route's jobs in flight). A lone request can always hedge; an outage that
// makes every job hedge cannot double the traffic.
type hedgeBudgets struct {
	mu     sync.Mutex
	routes map[string]*routeLoad
}

type routeLoad struct {
	jobs, hedges int
	// percent and min are the route's budget (set by acquireOrWait), for
	// telling whether a slot is free when no one asks (allowed).
	percent float64
	min     int
	// waiters are the wake channels of the route's jobs that a call beside
	// their others was denied to, oldest first (acquireOrWait). Each time a
	// slot may have been freed — one given back, or a job started growing a
	// percent budget — and one is free, the first is taken off and signalled
	// (wakeLocked): one job per slot, not a stampede of every denied job.
	waiters []chan struct{}
}

// allowed is how many hedges the route's budget allows in flight now.
func (l *routeLoad) allowed() int {
	if l.percent <= 0 && l.min <= 0 {
		return math.MaxInt // no budget configured
	}
	return max(l.min, int(l.percent*float64(l.jobs)/100))
}

// wakeLocked signals the first waiting job when a slot is free. b.mu held.
// The send never blocks: a job's wake channel has room for one signal and is
// among the waiters only while it holds none (acquireOrWait's caller
// registers it again only after taking the signal).
func (l *routeLoad) wakeLocked() {
	if len(l.waiters) == 0 || l.hedges >= l.allowed() {
		return
	}
	w := l.waiters[0]
	l.waiters = slices.Delete(l.waiters, 0, 1)
	select {
	case w <- struct{}{}:
	default:
	}
}

// calls is "1 call" or "n calls".
func calls(n int) string {
	if n == 1 {
		return "1 call"
	}
	return fmt.Sprintf("%d calls", n)
}

func (b *hedgeBudgets) load(route string) *routeLoad {
	if b.routes == nil {
		b.routes = map[string]*routeLoad{}
	}
	l := b.routes[route]
	if l == nil {
		l = &routeLoad{}
		b.routes[route] = l
	}
	return l
}

// jobStarted counts a job in flight on route until the returned func is called.
func (b *hedgeBudgets) jobStarted(route string) (done func()) {
	b.mu.Lock()
	l := b.load(route)
	l.jobs++
	l.wakeLocked() // a percent budget may allow one more
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		b.load(route).jobs--
		b.mu.Unlock()
	}
}

// acquire takes one slot of the route's budget (a call in flight beyond a
// job's first); release gives it back. When the budget is spent, why says so
// in words for the job's routing (deniedCall names the call denied).
func (b *hedgeBudgets) acquire(name string, route *Route) (release func(), ok bool, why string) {
	return b.acquireOrWait(name, route, nil)
}

// acquireOrWait is acquire; denied, wake (unless nil) joins the route's
// waiters, to be signalled once when a slot may be free for it (wakeLocked).
func (b *hedgeBudgets) acquireOrWait(name string, route *Route, wake chan struct{}) (release func(), ok bool, why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.load(name)
	l.percent, l.min = route.HedgeBudgetPercent, route.HedgeBudgetMin
	allowed := l.allowed()
	if l.hedges >= allowed {
		if wake != nil {
			l.waiters = append(l.waiters, wake)
		}
		return nil, false, fmt.Sprintf("the route's hedge budget is spent: %s in flight beyond one per job, and its hedge_budget allows "+
			"max(min_concurrent %d, %g%% of the route's %d jobs in flight) = %d",
			calls(l.hedges), route.HedgeBudgetMin, route.HedgeBudgetPercent, l.jobs, allowed)
	}
	l.hedges++
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			l.hedges--
			l.wakeLocked()
			b.mu.Unlock()
		})
	}, true, ""
}

// passOn gives a wake a job did not act on to the route's next waiting job.
func (b *hedgeBudgets) passOn(route string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.load(route).wakeLocked()
}

// forget takes wake, whose job ends, off the route's waiters. One taken off
// already was signalled (under b.mu, so the signal is in it now): it is
// passed on to the next waiter.
func (b *hedgeBudgets) forget(route string, wake chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.load(route)
	if i := slices.Index(l.waiters, wake); i >= 0 {
		l.waiters = slices.Delete(l.waiters, i, i+1)
		return
	}
	select {
	case <-wake:
		l.wakeLocked()
	default:
	}
}

// threeQuarters is ¾ of d, computed so that it cannot overflow: d*3/4 does
// for any d over about 97 years (a route deadline written as "forever"),
// and a negative delay reads as "no hedging".
func threeQuarters(d time.Duration) time.Duration { return d - d/4 }
