package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// heldPlanExec is the runner, holding a request whose input holds subject,
// once armed, right after the runner planned it and before its claim: the
// request is then in flight with its plan made, as a replay is while its
// claim waits for its batch.
type heldPlanExec struct {
	*race.Runner
	subject string
	armed   atomic.Bool
	planned chan struct{}
	release chan struct{}
	once    sync.Once
}

// free lets the held request go on.
func (e *heldPlanExec) free() { e.once.Do(func() { close(e.release) }) }

func (e *heldPlanExec) hold(job *store.Job) {
	if strings.Contains(string(job.Input), e.subject) && e.armed.CompareAndSwap(true, false) {
		e.planned <- struct{}{}
		<-e.release
	}
}

func (e *heldPlanExec) Plan(job *store.Job) (store.JobPlan, json.RawMessage, bool, error) {
	p, routing, ok, err := e.Runner.Plan(job)
	e.hold(job)
	return p, routing, ok, err
}

func (e *heldPlanExec) PlanDeferred(job *store.Job) (store.JobPlan, json.RawMessage, bool, error) {
	p, routing, ok, err := e.Runner.PlanDeferred(job)
	e.hold(job)
	return p, routing, ok, err
}

// halfOpenBundle is a router whose primary's breaker (one probe) has just
// half-opened, with a fallback, and whose plans of a request naming subject
// can be held (heldPlanExec).
func halfOpenBundle(t *testing.T, subject string, respond func(int, *providers.Request) providers.Step) (*bundle, *breaker.Set, *heldPlanExec, func()) {
	t.Helper()
	changes := make(chan breaker.Change, 16)
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 1, OpenFor: 20 * time.Millisecond, HalfOpenProbes: 1}},
		breaker.Options{OnChange: func(c breaker.Change) { changes <- c }})
	t.Cleanup(set.Close)
	exec := &heldPlanExec{subject: subject, planned: make(chan struct{}, 1), release: make(chan struct{})}
	b := setup(t, options{admission: set, respond: respond,
		fallback: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} },
		exec:     func(e api.Executor) api.Executor { exec.Runner = e.(*race.Runner); return exec }})
	t.Cleanup(exec.free) // before the server closes, which waits for the held request
	trip := func() {
		t.Helper()
		release, ok, why := set.Admit("primary")
		if !ok {
			t.Fatalf("the closed breaker refused: %s", why)
		}
		release(race.OutcomeFailure)
		for _, want := range []string{breaker.StateOpen, breaker.StateHalfOpen} {
			select {
			case c := <-changes:
				if c.To != want {
					t.Fatalf("breaker went %s -> %s, want %s", c.From, c.To, want)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("the breaker did not become %s", want)
			}
		}
	}
	return b, set, exec, trip
}

func primaryCounts(t *testing.T, set *breaker.Set) breaker.Status {
	t.Helper()
	for _, st := range set.Snapshot() {
		if st.Provider == "primary" {
			return st
		}
	}
	t.Fatal("no primary breaker")
	return breaker.Status{}
}

// firstAttempt reads job id's first attempt.
func firstAttempt(t *testing.T, b *bundle, id string) map[string]any {
	t.Helper()
	got := b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")
	attempts, _ := got.body["attempts"].([]any)
	if len(attempts) == 0 {
		t.Fatalf("job %s has no attempt: %s", id, got.raw)
	}
	a, _ := attempts[0].(map[string]any)
	return a
}

// A replay takes no breaker admission. With half_open_probes: 1, a replay in
// flight (its plan made, its claim not yet answered) held the half-open
// breaker's one probe until its claim came back "held": a new job meanwhile
// skipped the recovered primary ("its one probe is in flight"), and every
// replay counted in the breaker's requests. Now a request that may be a
// replay plans without taking a slot, and a new job takes it once its claim
// has created it. Found by review.
func TestReplayTakesNoBreakerProbe(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		body func(subject string) string
	}{
		{"jobs", "/v1/jobs", triageBody},
		{"chat", chatPath, func(subject string) string {
			return `{"model":"default","messages":[{"role":"user","content":"` + subject + `"}]}`
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, set, exec, trip := halfOpenBundle(t, "Replayed", nil)
			first := b.do(t, http.MethodPost, tc.path, acmeKey, tc.body("Replayed"), "Idempotency-Key", "replayed-1", "Prefer", "wait=30")
			if first.status != http.StatusCreated && first.status != http.StatusOK {
				t.Fatalf("first request: %d %s", first.status, first.raw)
			}
			trip()
			if c := primaryCounts(t, set); c.State != breaker.StateHalfOpen || c.Counts.Requests != 0 {
				t.Fatalf("breaker %s with %d requests, want half-open with none", c.State, c.Counts.Requests)
			}

			// A replay after the recovery counts in no request.
			replay := b.do(t, http.MethodPost, tc.path, acmeKey, tc.body("Replayed"), "Idempotency-Key", "replayed-1")
			if replay.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d %v %s", replay.status, replay.header, replay.raw)
			}
			if c := primaryCounts(t, set).Counts; c.Requests != 0 {
				t.Errorf("a replay counted in the half-open breaker's requests: %+v", c)
			}

			// A replay in flight, planned but not yet claimed, beside a new job.
			exec.armed.Store(true)
			replayed := make(chan reply, 1)
			go func() {
				r, err := send(b.srv.URL+tc.path, http.MethodPost, acmeKey, tc.body("Replayed"), "Idempotency-Key", "replayed-1")
				if err != nil {
					r.status = -1
				}
				replayed <- r
			}()
			select {
			case <-exec.planned:
			case r := <-replayed:
				t.Fatalf("the replay was not held after its plan: %d %s", r.status, r.raw)
			}
			if c := primaryCounts(t, set).Counts; c.Requests != 0 {
				t.Errorf("a replay in flight holds a slot of the half-open breaker: %+v", c)
			}
			fresh := b.do(t, http.MethodPost, tc.path, acmeKey, tc.body("New"), "Idempotency-Key", "new-1", "Prefer", "wait=30")
			id := fresh.header.Get("X-Router-Job-Id")
			if fresh.status != http.StatusCreated && fresh.status != http.StatusOK || id == "" {
				t.Fatalf("new job: %d %s", fresh.status, fresh.raw)
			}
			if a := firstAttempt(t, b, id); a["provider"] != "primary" || a["role"] != store.RolePrimary || a["state"] != store.AttemptWon {
				t.Errorf("the new job's first attempt is %v on %v (%v), want the primary's probe, won", a["role"], a["provider"], a["state"])
			}
			exec.free()
			if r := <-replayed; r.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("held replay: %d %s", r.status, r.raw)
			}
			if st := primaryCounts(t, set); st.State != breaker.StateClosed || st.Counts.Requests != 0 {
				t.Errorf("after the probe succeeded and the held replay ended: breaker %s %+v, want closed with no request", st.State, st.Counts)
			}
			// Closed, a replay still counts in no request.
			if r := b.do(t, http.MethodPost, tc.path, acmeKey, tc.body("Replayed"), "Idempotency-Key", "replayed-1"); r.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d %s", r.status, r.raw)
			}
			if c := primaryCounts(t, set).Counts; c.Requests != 0 {
				t.Errorf("a replay counted in the closed breaker's requests: %+v", c)
			}
		})
	}
}

// A new job whose plan chose the half-open primary, but whose claim came
// back after another new job took the breaker's one probe, does not send its
// first attempt unadmitted: the attempt is recorded as never sent (it counts
// neither as the primary tried nor against max_attempts) and the job runs on
// the fallback.
func TestNewJobRefusedTheProbeAfterItsClaimFailsOver(t *testing.T) {
	probing, called := make(chan struct{}), make(chan struct{}, 1)
	b, set, exec, trip := halfOpenBundle(t, "Late", func(_ int, req *providers.Request) providers.Step {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "Probe") {
				called <- struct{}{}
				<-probing // the probe stays in flight until the late job is answered
			}
		}
		return providers.Step{Output: validTriage}
	})
	trip()
	exec.armed.Store(true)
	late := make(chan reply, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/jobs", http.MethodPost, acmeKey, triageBody("Late"), "Idempotency-Key", "late-1", "Prefer", "wait=30")
		if err != nil {
			r.status = -1
		}
		late <- r
	}()
	select {
	case <-exec.planned: // planned on the primary, which admitted anything then
	case r := <-late:
		t.Fatalf("the late job was not held after its plan: %d %s", r.status, r.raw)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(probing) }) })
	probe := b.create(t, acmeKey, "probe-1", triageBody("Probe"))
	if a := firstAttempt(t, b, probe.job()); probe.status != http.StatusAccepted || a["provider"] != "primary" {
		t.Fatalf("probe job: %d, first attempt %v, want 202 with the primary's probe: %s", probe.status, a, probe.raw)
	}
	<-called
	if c := primaryCounts(t, set).Counts; c.Requests != 1 {
		t.Fatalf("the probe job did not take the probe: %+v", c)
	}
	exec.free()
	r := <-late
	once.Do(func() { close(probing) })
	if r.status != http.StatusCreated || r.body["state"] != store.JobSucceeded {
		t.Fatalf("late job: %d %s", r.status, r.raw)
	}
	attempts, _ := r.body["attempts"].([]any)
	if len(attempts) != 2 {
		t.Fatalf("late job's attempts: %s", r.raw)
	}
	a0, _ := attempts[0].(map[string]any)
	a1, _ := attempts[1].(map[string]any)
	e0, _ := a0["error"].(map[string]any)
	if msg, _ := e0["message"].(string); a0["provider"] != "primary" || a0["state"] != store.AttemptCancelled || e0["kind"] != "not_sent" ||
		!strings.Contains(msg, "its one probe is in flight") {
		t.Errorf("first attempt: %v", a0)
	}
	if a1["provider"] != "fallback" || a1["state"] != store.AttemptWon {
		t.Errorf("second attempt: %v", a1)
	}
	if n := b.primary.Calls(); n != 1 {
		t.Errorf("the primary was called %d times, want once (the probe job's)", n)
	}
}
