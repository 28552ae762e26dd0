package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// countingAdmission is a breaker set that counts the admissions asked of it.
type countingAdmission struct {
	*breaker.Set
	admits atomic.Int64
}

func (c *countingAdmission) Admit(provider string) (func(race.Outcome), bool, string) {
	c.admits.Add(1)
	return c.Set.Admit(provider)
}

// halfOpenPrimary opens the primary's breaker (one failure trips it, open for
// a millisecond) and returns once it has turned half-open.
func halfOpenPrimary(t *testing.T, set *breaker.Set, changes <-chan breaker.Change) {
	t.Helper()
	release, ok, why := set.Admit("primary")
	if !ok {
		t.Fatalf("the breaker refused: %s", why)
	}
	release(race.OutcomeFailure)
	for {
		select {
		case c := <-changes:
			if c.Provider == "primary" && c.To == breaker.StateHalfOpen {
				return
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the primary's breaker never turned half-open")
		}
	}
}

// closedAgain returns once the primary's breaker has closed: its probe's
// success is reported when the attempt ends, which may come just after the
// caller has its answer (a chat answer is written at the win).
func closedAgain(t *testing.T, changes <-chan breaker.Change, why string) {
	t.Helper()
	for {
		select {
		case c := <-changes:
			if c.Provider == "primary" && c.To == breaker.StateClosed {
				return
			}
		case <-time.After(30 * time.Second):
			t.Fatal(why)
		}
	}
}

// holdReplay holds the one replay it is armed for where it first gets to:
// its key's lookup (a statement of its request on idempotency_keys, seen by a
// pgx tracer) or, when it plans, just after Plan (holding what Plan admitted).
type holdReplay struct {
	api.Executor
	requestID string
	input     atomic.Pointer[string] // the replay's job input; nil: not armed
	once      sync.Once
	reached   chan string // where the replay is held
	release   chan struct{}
	lookups   atomic.Int64 // key lookups before planning (KeyHeld)
}

func (h *holdReplay) hold(where string) {
	first := false
	h.once.Do(func() { first = true; h.reached <- where })
	if first {
		<-h.release
	}
}

func (h *holdReplay) Plan(job *store.Job) (store.JobPlan, json.RawMessage, bool, error) {
	plan, routing, ok, err := h.Executor.Plan(job)
	if in := h.input.Load(); in != nil && *in == string(job.Input) {
		h.hold("after its Plan")
	}
	return plan, routing, ok, err
}

// HalfOpen passes the runner's capability through the wrapper.
func (h *holdReplay) HalfOpen(route string) bool {
	v, ok := h.Executor.(interface{ HalfOpen(string) bool })
	return ok && v.HalfOpen(route)
}

func (h *holdReplay) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "SELECT EXISTS (SELECT 1 FROM idempotency_keys") {
		h.lookups.Add(1)
		if api.RequestID(ctx) == h.requestID {
			h.hold("in its key's lookup")
		}
	}
	return ctx
}

func (h *holdReplay) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// halfOpenRig is a route whose primary's breaker is half-open, with one job
// created (succeeded) before it opened, under halfOpenKey.
type halfOpenRig struct {
	*bundle
	set   *breaker.Set
	adm   *countingAdmission
	hold  *holdReplay
	first reply
}

const (
	halfOpenKey  = "halfopen-replay-1"
	halfOpenBody = `{"prompt":"triage","input":{"subject":"Replayed","body":"I cannot log in since yesterday."}}`
	// halfOpenInput is halfOpenBody's input as the job stores it.
	halfOpenInput = `{"subject":"Replayed","body":"I cannot log in since yesterday."}`
)

func setupHalfOpen(t *testing.T) *halfOpenRig {
	t.Helper()
	changes := make(chan breaker.Change, 64)
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 1, OpenFor: time.Millisecond}},
		breaker.Options{OnChange: func(c breaker.Change) {
			select {
			case changes <- c:
			default:
			}
		}})
	t.Cleanup(set.Close)
	adm := &countingAdmission{Set: set}
	h := &holdReplay{requestID: "replay-held", reached: make(chan string, 1), release: make(chan struct{})}
	b := setup(t, options{admission: adm, tracer: h, exec: func(e api.Executor) api.Executor { h.Executor = e; return h }})
	first := b.create(t, acmeKey, halfOpenKey, halfOpenBody, "Prefer", "wait=30")
	if first.status != http.StatusCreated || first.body["state"] != "succeeded" {
		t.Fatalf("first job: %d %s", first.status, first.raw)
	}
	if n := h.lookups.Load(); n != 0 {
		t.Fatalf("a new job created while the breaker was closed looked its key up first (%d lookups)", n)
	}
	halfOpenPrimary(t, set, changes)
	return &halfOpenRig{bundle: b, set: set, adm: adm, hold: h, first: first}
}

// While a target's breaker is half-open, a replay (the same request resent
// with its Idempotency-Key) takes no breaker admission: each used to take the
// only probe while CreateJob found its job, and hand it back. The key is
// looked up first, only then: creating a new job while the breaker is closed
// looks nothing up (setupHalfOpen). Found by review.
func TestReplaysWhileHalfOpenTakeNoAdmission(t *testing.T) {
	b := setupHalfOpen(t)
	base := b.adm.admits.Load()
	for i := range 5 {
		r := b.create(t, acmeKey, halfOpenKey, halfOpenBody, "Prefer", "wait=30")
		if r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "true" || r.job() != b.first.job() {
			t.Fatalf("replay %d: %d %s", i, r.status, r.raw)
		}
	}
	if n := b.adm.admits.Load() - base; n != 0 {
		t.Fatalf("5 replays while half-open asked the breaker for %d admissions, want 0", n)
	}
	if !b.set.HalfOpen("primary") {
		t.Fatal("the replays moved the breaker out of half-open")
	}
}

// A new job arriving while a replay is under way, the breaker half-open, is
// not refused because of the replay: it used to be answered 503
// no-eligible-provider, "its one probe is in flight", when the replay held
// the probe only to hand it back. The replay is held where it first gets to
// (its key's lookup; without the lookup, just after its Plan). Found by
// review.
func TestNewJobNotRefusedForAReplayWhileHalfOpen(t *testing.T) {
	b := setupHalfOpen(t)
	base := b.adm.admits.Load()
	in := halfOpenInput
	b.hold.input.Store(&in)
	done := make(chan reply, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/jobs", "POST", acmeKey, halfOpenBody,
			"Idempotency-Key", halfOpenKey, api.RequestIDHeader, b.hold.requestID)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	var where string
	select {
	case where = <-b.hold.reached:
	case r := <-done:
		t.Fatalf("the replay was never held: %d %s", r.status, r.raw)
	case <-time.After(30 * time.Second):
		t.Fatal("the replay was never held")
	}
	fresh := b.create(t, acmeKey, "halfopen-replay-2", triageBody("New while a replay is held"), "Prefer", "wait=30")
	close(b.hold.release)
	replay := <-done
	if fresh.status != http.StatusCreated || fresh.body["state"] != "succeeded" {
		t.Fatalf("a new job created while a replay was held %s: %d %s; want 201 succeeded (the probe is the new job's)",
			where, fresh.status, fresh.raw)
	}
	if replay.status != http.StatusOK || replay.header.Get("Idempotent-Replayed") != "true" || replay.job() != b.first.job() {
		t.Fatalf("held replay: %d %s", replay.status, replay.raw)
	}
	if n := b.adm.admits.Load() - base; n != 1 {
		t.Fatalf("%d admissions asked while half-open, want 1 (the new job's probe)", n)
	}
}
