// Package breaker puts every target behind a circuit breaker (SPEC §10, §15):
// one github.com/sony/gobreaker/v2 TwoStepCircuitBreaker per target (provider ×
// model, named by its target id) per router process, with its provider's
// settings from the configuration, and one per model a route's `models` may
// send to a target's provider in place of the target's own (Options.Sent).
// Where this package says "provider" it means the name a breaker is kept
// under: internal/server names them by target id (config.TargetID of the
// provider and the model sent, for a model sent in place of a target's own).
// A Set is the race's Admission: it is asked before every attempt and told
// each attempt's outcome. A Publisher writes this process's breaker states to
// PostgreSQL so that every replica's view can be shown in one place.
//
// The two-step breaker suits attempts that take seconds: admission and outcome
// are two calls, and nothing is held across the provider call. Breakers are
// in-process state by design (SPEC §10); no guarantee of the race depends on
// them.
package breaker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/race"
)

// States as they are published and displayed.
const (
	StateClosed   = "closed"
	StateHalfOpen = "half-open"
	StateOpen     = "open"
)

// Settings of one provider's breaker.
type Settings struct {
	// ConsecutiveFailures opens the breaker (default 5). Counts are uint32 in
	// gobreaker: a larger setting saturates at 4294967295 rather than wrapping.
	ConsecutiveFailures int
	// OpenFor is how long it stays open before half-open probing (default 30s).
	OpenFor time.Duration
	// HalfOpenProbes is how many attempts may probe while half-open; that many
	// consecutive successes close it, one failure opens it again (default 1).
	HalfOpenProbes int
}

func (s Settings) withDefaults() Settings {
	if s.ConsecutiveFailures <= 0 {
		s.ConsecutiveFailures = 5
	}
	if s.OpenFor <= 0 {
		s.OpenFor = 30 * time.Second
	}
	if s.HalfOpenProbes <= 0 {
		s.HalfOpenProbes = 1
	}
	return s
}

// count32 converts a positive count to gobreaker's uint32, saturating: a
// plain conversion would wrap 4294967296 to 0 (a breaker that trips on every
// result). config.Validate refuses such values; this guards other callers.
func count32(n int) uint32 {
	if n <= 0 {
		return 0
	}
	if uint64(n) > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(n)
}

// SettingsFromConfig converts a provider's configured breaker settings.
func SettingsFromConfig(b config.Breaker) Settings {
	return Settings{ConsecutiveFailures: b.ConsecutiveFailures, OpenFor: b.OpenFor.D(), HalfOpenProbes: b.HalfOpenProbes}
}

// Change is one state transition of one provider's breaker.
type Change struct {
	Provider string
	From, To string
	At       time.Time
}

// Options tune a Set.
type Options struct {
	// OnChange, when set, hears every state transition. It is called
	// synchronously, in order, while the breaker is locked: it must not block and
	// must not call back into the Set (send on a buffered channel, set a gauge).
	OnChange func(Change)
	Log      *slog.Logger
	// Now, when set, is the clock that decides when open_for has passed (and
	// stamps changes); nil is time.Now. With a clock of its own the Set alone
	// decides open -> half-open: gobreaker cannot take a clock, so its own
	// timeout is then made negligible and the Set holds the breaker open until
	// Now says open_for has passed. Tests use it to hold time still.
	Now func() time.Time
	// Sent names, for an attempt on a target that sends another model than
	// the target's own (a chat request naming one of its route's `models`),
	// the breaker that admits and counts it: the breaker of the target's
	// provider × the model sent (SPEC §10, §15), so that one model's
	// failures open no other model's breaker. Each name must be one of New's
	// settings (others are left out: such an attempt counts on its target's
	// breaker). The set is the configuration's, known at start: never made
	// from what callers send. See BreakerOf.
	Sent map[SentModel]string
}

// Set holds one breaker per provider. Safe for concurrent use.
type Set struct {
	opt      Options
	ownClock bool // opt.Now was given: the Set's hold, not gobreaker's timeout, ends open_for
	names    []string
	breakers map[string]*providerBreaker
	changed  chan struct{} // capacity 1: "something changed since you last looked"
	// sent is opt.Sent without the names that have no breaker; sentOf lists,
	// per target, the breakers of the models it may send in place of its own.
	sent   map[SentModel]string
	sentOf map[string][]string

	mu     sync.Mutex
	closed bool
}

type providerBreaker struct {
	set      *Set
	name     string
	settings Settings
	cb       *gobreaker.TwoStepCircuitBreaker[struct{}]

	mu        sync.Mutex // guards the fields below; never held while calling cb
	changedAt time.Time
	openUntil time.Time // while Now is before it, the breaker is open whatever gobreaker says
	tripped   uint32    // consecutive failures that last opened the breaker; 0 after a failed probe
	timer     *time.Timer

	pendingTrip uint32 // set by ReadyToTrip; only touched under gobreaker's lock
}

// Errors reported to gobreaker for the outcomes of attempts.
var (
	errFailure = errors.New("provider failure")
	errIgnored = errors.New("excluded from the breaker's counts")
)

// New makes a Set with one breaker per provider named in settings.
func New(settings map[string]Settings, opt Options) *Set {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	// gobreaker measures its Timeout on time.Now. With the default clock it
	// keeps open_for as before; with an injected clock it expires at once and
	// the Set's hold (openUntil, on that clock) is what keeps it open.
	ownClock := opt.Now != nil
	if !ownClock {
		opt.Now = time.Now
	}
	s := &Set{opt: opt, ownClock: ownClock, breakers: map[string]*providerBreaker{}, changed: make(chan struct{}, 1)}
	now := s.now()
	for name, st := range settings {
		st = st.withDefaults()
		timeout := st.OpenFor
		if ownClock {
			timeout = time.Nanosecond
		}
		b := &providerBreaker{set: s, name: name, settings: st, changedAt: now}
		b.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
			Name:        name,
			MaxRequests: count32(st.HalfOpenProbes),
			// Interval 0: counts are cleared only when the state changes.
			Timeout: timeout,
			ReadyToTrip: func(c gobreaker.Counts) bool {
				if c.ConsecutiveFailures >= count32(st.ConsecutiveFailures) {
					b.pendingTrip = c.ConsecutiveFailures // under gobreaker's lock, like onChange
					return true
				}
				return false
			},
			IsSuccessful:  func(err error) bool { return err == nil },
			IsExcluded:    func(err error) bool { return errors.Is(err, errIgnored) },
			OnStateChange: func(_ string, from, to gobreaker.State) { b.onChange(from, to) },
		})
		s.breakers[name] = b
		s.names = append(s.names, name)
	}
	sort.Strings(s.names)
	s.sent, s.sentOf = sentBreakers(opt.Sent, s.breakers)
	return s
}

// FromConfig makes a Set with a breaker under each provider's name, for its
// own model. A serving router keeps one per target instead (config.AllTargets,
// each with its provider's settings), as internal/server does.
func FromConfig(providers []config.Provider, opt Options) *Set {
	m := make(map[string]Settings, len(providers))
	for _, p := range providers {
		m[p.Name] = SettingsFromConfig(p.Breaker)
	}
	return New(m, opt)
}

var _ race.Admission = (*Set)(nil)

// onChange runs under gobreaker's lock.
func (b *providerBreaker) onChange(from, to gobreaker.State) {
	now := b.set.now()
	b.mu.Lock()
	b.changedAt = now
	b.openUntil = time.Time{}
	if to == gobreaker.StateOpen {
		b.openUntil = now.Add(b.settings.OpenFor)
		b.tripped = 0
		if from == gobreaker.StateClosed {
			b.tripped = b.pendingTrip
		}
	}
	trip := b.tripped
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if to == gobreaker.StateOpen && !b.set.isClosed() {
		// gobreaker moves open -> half-open lazily, when it is next asked. Ask it
		// when open_for has passed, so the change is published (and seen by
		// metrics and the dashboard) when it happens rather than at the next
		// request.
		b.timer = time.AfterFunc(probeAfter(b.settings.OpenFor), b.poke)
	}
	b.mu.Unlock()
	level := slog.LevelInfo
	if to == gobreaker.StateOpen {
		level = slog.LevelWarn
	}
	attrs := []any{"provider", b.name, "from", stateName(from), "to", stateName(to)}
	if to == gobreaker.StateOpen && from == gobreaker.StateClosed {
		attrs = append(attrs, "consecutive_failures", trip, "open_for", b.settings.OpenFor)
	}
	b.set.opt.Log.Log(context.Background(), level, "circuit breaker changed state", attrs...)
	select {
	case b.set.changed <- struct{}{}:
	default:
	}
	if f := b.set.opt.OnChange; f != nil {
		f(Change{Provider: b.name, From: stateName(from), To: stateName(to), At: now})
	}
}

// probeAfter is when to ask an opened breaker for its state: just after
// open_for, saturating. open_for+1ms past the largest Duration wraps negative,
// the timer fires at once, finds the breaker open and re-arms every 5ms for
// as long as it stays open: a busy loop instead of one wake-up.
func probeAfter(openFor time.Duration) time.Duration {
	if openFor > math.MaxInt64-time.Millisecond {
		return math.MaxInt64
	}
	return openFor + time.Millisecond
}

// poke asks the breaker its state, which makes gobreaker leave the open state
// once open_for has passed; if it is still open (timer fired a hair early), try
// again shortly.
func (b *providerBreaker) poke() {
	if b.set.isClosed() {
		return
	}
	if b.state() == gobreaker.StateOpen {
		// Still held open by the Set's clock: look again when it may have passed.
		wait := max(b.heldFor(), 5*time.Millisecond)
		b.mu.Lock()
		if b.timer == nil && !b.set.isClosed() {
			b.timer = time.AfterFunc(wait, b.poke)
		} else if b.timer != nil {
			b.timer.Reset(wait)
		}
		b.mu.Unlock()
	}
}

// heldFor is how long the Set's clock still holds the breaker open: 0 once
// more than open_for has passed since it opened (as gobreaker counts it),
// when it is not open, or when the Set has no clock of its own (gobreaker's
// timeout, open_for on time.Now, decides alone: an admission takes no lock
// and no clock read more than gobreaker's own).
func (b *providerBreaker) heldFor() time.Duration {
	if !b.set.ownClock {
		return 0
	}
	b.mu.Lock()
	until := b.openUntil
	b.mu.Unlock()
	if until.IsZero() {
		return 0
	}
	d := until.Sub(b.set.now())
	if d < 0 {
		return 0
	}
	return max(d, time.Nanosecond)
}

// state is the breaker's state on the Set's clock: open while held, otherwise
// gobreaker's (asking it may move open -> half-open and call onChange).
func (b *providerBreaker) state() gobreaker.State {
	if b.heldFor() > 0 {
		return gobreaker.StateOpen
	}
	return b.cb.State()
}

func (s *Set) now() time.Time { return s.opt.Now() }

func (s *Set) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops the Set's timers. Admission keeps working.
func (s *Set) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	for _, b := range s.breakers {
		b.mu.Lock()
		if b.timer != nil {
			b.timer.Stop()
			b.timer = nil
		}
		b.mu.Unlock()
	}
}

// Providers lists the providers with a breaker, sorted.
func (s *Set) Providers() []string { return append([]string(nil), s.names...) }

// Changed is signalled (coalesced) after any breaker changed state.
func (s *Set) Changed() <-chan struct{} { return s.changed }

// Admit implements race.Admission: it takes one slot of the provider's breaker
// (a probe, when half-open). release must be called once with the attempt's
// outcome; OutcomeIgnore (a hedge loser that had begun answering or was never
// hedged, a cancelled job, an attempt that was never sent) gives the slot back
// without counting. A loser silent past the hedge it caused is a failure
// (race.OutcomeFailure). A provider without a breaker is always admitted.
func (s *Set) Admit(provider string) (release func(race.Outcome), ok bool, reason string) {
	b, found := s.breakers[provider]
	if !found {
		return func(race.Outcome) {}, true, ""
	}
	if b.heldFor() > 0 {
		return nil, false, b.refusal(gobreaker.ErrOpenState)
	}
	done, err := b.cb.Allow()
	if err != nil {
		return nil, false, b.refusal(err)
	}
	var once sync.Once
	return func(o race.Outcome) {
		once.Do(func() {
			switch o {
			case race.OutcomeSuccess:
				done(nil)
			case race.OutcomeIgnore:
				done(errIgnored)
			default:
				done(errFailure)
			}
		})
	}, true, ""
}

// State says, without taking a slot, whether the provider's breaker would admit
// an attempt now, and why not (for routing and display).
func (s *Set) State(provider string) (ok bool, reason string) {
	b, found := s.breakers[provider]
	if !found {
		return true, ""
	}
	switch b.state() {
	case gobreaker.StateOpen:
		return false, b.refusal(gobreaker.ErrOpenState)
	case gobreaker.StateHalfOpen:
		c := b.cb.Counts()
		if c.Requests-min(c.TotalExclusions, c.Requests) >= count32(b.settings.HalfOpenProbes) {
			return false, b.refusal(gobreaker.ErrTooManyRequests)
		}
	}
	return true, ""
}

var _ race.HalfOpenView = (*Set)(nil)

// HalfOpen implements race.HalfOpenView: whether the provider's breaker is
// half-open now (an open one whose open_for has passed turns half-open as it
// is asked), without taking a slot. A provider without a breaker is not.
func (s *Set) HalfOpen(provider string) bool {
	b, found := s.breakers[provider]
	return found && b.state() == gobreaker.StateHalfOpen
}

var _ race.AdmitDelay = (*Set)(nil)

// AdmitsIn implements race.AdmitDelay: how long until the provider's breaker
// may admit an attempt. An open breaker probes again when open_for has passed
// since it opened (known); a closed one admits now (0, known), and so does a
// half-open one with a probe free (State); a half-open one whose probes are
// all in flight admits as soon as one of them ends well, which nothing says
// when (known is false). A provider without a breaker admits now.
func (s *Set) AdmitsIn(provider string) (d time.Duration, known bool) {
	b, found := s.breakers[provider]
	if !found {
		return 0, true
	}
	switch b.state() {
	case gobreaker.StateOpen:
		b.mu.Lock()
		since := b.set.now().Sub(b.changedAt)
		b.mu.Unlock()
		return max(b.settings.OpenFor-since, 0), true
	case gobreaker.StateHalfOpen:
		if ok, _ := s.State(provider); ok {
			return 0, true // a probe is free: it admits now
		}
		return 0, false
	}
	return 0, true
}

func (b *providerBreaker) refusal(err error) string {
	b.mu.Lock()
	since := b.set.now().Sub(b.changedAt)
	trip := b.tripped
	b.mu.Unlock()
	if errors.Is(err, gobreaker.ErrTooManyRequests) {
		return halfOpenRefusal(b.settings.HalfOpenProbes, b.cb.Counts())
	}
	// Rounded up: a breaker still open has time left, and "probing again in
	// 0s" (under half a second left) read as a breaker already probing.
	left := (max(b.settings.OpenFor-since, 0) + time.Second - 1).Truncate(time.Second)
	if trip > 0 {
		return fmt.Sprintf("circuit breaker open after %d consecutive failures; probing again in %s", trip, left)
	}
	return fmt.Sprintf("circuit breaker open (a half-open probe failed); probing again in %s", left)
}

// halfOpenRefusal says why a half-open breaker refuses an attempt: all its
// probes are taken. With the counts of its half-open state, it says how many
// of them succeeded and how many are still in flight (a failed probe opens the
// breaker again; an excluded one gives its probe back). Counts read after the
// state moved on (closed or opened again since the refusal) do not describe
// the probes: the reason then says only that they were taken.
func halfOpenRefusal(probes int, c gobreaker.Counts) string {
	taken := fmt.Sprintf("circuit breaker half-open: all %d of its probes are taken", probes)
	if probes == 1 {
		taken = "circuit breaker half-open: its one probe is taken"
	}
	ended := uint64(c.TotalSuccesses) + uint64(c.TotalFailures) + uint64(c.TotalExclusions)
	valid := uint64(c.Requests) - min(uint64(c.TotalExclusions), uint64(c.Requests))
	if uint64(c.Requests) < ended || valid != uint64(probes) {
		return taken
	}
	inFlight := uint64(c.Requests) - ended
	if probes == 1 {
		if inFlight == 1 {
			return "circuit breaker half-open: its one probe is in flight"
		}
		return taken
	}
	return fmt.Sprintf("%s (%d succeeded, %d in flight)", taken, c.TotalSuccesses, inFlight)
}

// Status is a snapshot of one provider's breaker.
type Status struct {
	Provider string
	State    string
	Counts   gobreaker.Counts
	// ChangedAt is when the state last changed (or the Set was made).
	ChangedAt time.Time
	Settings  Settings
}

// Snapshot returns every breaker's status, sorted by provider.
func (s *Set) Snapshot() []Status {
	out := make([]Status, 0, len(s.names))
	for _, name := range s.names {
		b := s.breakers[name]
		st := b.state() // may move open -> half-open (and call onChange)
		c := b.cb.Counts()
		b.mu.Lock()
		at := b.changedAt
		b.mu.Unlock()
		out = append(out, Status{Provider: name, State: stateName(st), Counts: c, ChangedAt: at, Settings: b.settings})
	}
	return out
}

// BreakerStates maps each provider to its breaker state (for metrics).
func (s *Set) BreakerStates() map[string]string {
	out := make(map[string]string, len(s.names))
	for _, name := range s.names {
		out[name] = stateName(s.breakers[name].state())
	}
	return out
}

func stateName(st gobreaker.State) string {
	switch st {
	case gobreaker.StateOpen:
		return StateOpen
	case gobreaker.StateHalfOpen:
		return StateHalfOpen
	default:
		return StateClosed
	}
}
