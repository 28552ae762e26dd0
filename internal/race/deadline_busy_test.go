package race_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// The tests below keep the job's orchestration busy past the job's deadline
// — in the conformance gate's read that chooses a target, in an attempt's
// creation waiting for the job's row — as a slow database does. The run loop
// learns of the deadline from its timer only when it next selects; the
// attempt being started then must not be. Found by review.

// stallGate is a conformance gate that allows everything, but holds its
// first call made from inside the function named in (a suffix of its full
// name: ".(*orchestrator).hedgeDue") until hold returns. It holds the
// goroutine that called it, as a gate's slow database read does.
type stallGate struct {
	in      string
	hold    func()
	once    sync.Once
	stalled chan struct{} // closed once the held call returns
}

func newStallGate(in string, hold func()) *stallGate {
	return &stallGate{in: in, hold: hold, stalled: make(chan struct{})}
}

func (g *stallGate) AllowModel(_ context.Context, _, _ string, _ *prompt.Prompt, _ string) (bool, string) {
	if calledFrom(g.in) {
		g.once.Do(func() {
			g.hold()
			close(g.stalled)
		})
	}
	return true, ""
}

// mustHaveStalled fails the test if the gate never held a call: the test
// would not have tested what it says.
func (g *stallGate) mustHaveStalled(t *testing.T) {
	t.Helper()
	select {
	case <-g.stalled:
	default:
		t.Fatalf("the gate was never asked from %s: the test did not keep the orchestration busy", g.in)
	}
}

// calledFrom says whether the caller's stack has a function whose name ends
// in fn.
func calledFrom(fn string) bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, fn) {
			return true
		}
		if !more {
			return false
		}
	}
}

// pastDeadline waits until the job's deadline has passed for an
// orchestration that was already running when it is called: the deadline is
// fixed before the orchestration starts, at most deadline from now. It is the
// condition under test, not a synchronisation.
func pastDeadline(deadline time.Duration) { <-time.After(deadline) }

// attemptsOf is the job's attempts in words, for a failure's message.
func attemptsOf(j *store.Job) string {
	var out []string
	for _, a := range j.Attempts {
		out = append(out, fmt.Sprintf("%d %s %s %s %s", a.Seq, a.Provider, a.Role, a.State, a.Error))
	}
	return "[" + strings.Join(out, "; ") + "]"
}

// unreachableProvider is an OpenAI adapter whose connection never gets made
// (a SYN never answered): an attempt on it that the job's deadline cuts was
// never sent, a known outcome (failed), so its job fails rather than waits
// as unknown.
func unreachableProvider(t *testing.T, name string) providers.Provider {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}}
	adapter, err := providers.NewOpenAI(providers.OpenAIConfig{Name: name, BaseURL: "http://provider.invalid/v1", APIKey: "sk-test",
		Model: "m", HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	return adapter
}

// A hedge whose target choice (the conformance gate's read) lasted past the
// job's deadline is not started: the deadline stops the race, the silent
// primary is cut, and the job fails by its deadline. It used to start the
// hedge past the deadline, which the timer then cut at once: unknown, a
// request sent for nothing, the job unknown instead of failed.
func TestNoHedgeStartsPastTheDeadline(t *testing.T) {
	const deadline = time.Second
	gate := newStallGate(".(*orchestrator).hedgeDue", func() { pastDeadline(deadline) })
	b := racetest.New(t, racetest.Options{
		Route: race.Route{Deadline: deadline, HedgeAfter: 400 * time.Millisecond},
		Gate:  gate,
		Providers: []racetest.Provider{
			{Name: "primary", Adapter: unreachableProvider(t, "primary"), Timeout: time.Hour},
			{Name: "fallback", Respond: racetest.Hang},
		}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	gate.mustHaveStalled(t)
	if j.State != store.JobFailed || !strings.Contains(derefString(j.Error), "deadline of 1s passed") {
		t.Fatalf("job %s (%v): want it failed by its deadline", j.State, derefString(j.Error))
	}
	if len(j.Attempts) != 1 || j.Attempts[0].Provider != "primary" {
		t.Fatalf("attempts %s: want only the primary's, no hedge started past the deadline", attemptsOf(j))
	}
	if n := b.Prov["fallback"].Calls(); n != 0 {
		t.Fatalf("the fallback was called %d times after the job's deadline", n)
	}
}

// A failover whose target choice lasted past the job's deadline is not
// started either: the job fails by its deadline, with the primary's failure.
// It used to start the failover, which the deadline's timer then cut at once
// (unknown: a hanging target sent the request).
func TestNoFailoverStartsPastTheDeadline(t *testing.T) {
	const deadline = time.Second
	gate := newStallGate(".(*orchestrator).failover", func() { pastDeadline(deadline) })
	b := racetest.New(t, racetest.Options{
		Route: race.Route{Deadline: deadline, MaxInflight: 1},
		Gate:  gate,
		Providers: []racetest.Provider{
			{Name: "primary", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
			{Name: "fallback", Respond: racetest.Hang},
		}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	gate.mustHaveStalled(t)
	why := derefString(j.Error)
	if j.State != store.JobFailed || !strings.Contains(why, "deadline of 1s passed") || !strings.Contains(why, "500") {
		t.Fatalf("job %s (%v): want it failed by its deadline, with the primary's 500", j.State, why)
	}
	if len(j.Attempts) != 1 || j.Attempts[0].Provider != "primary" {
		t.Fatalf("attempts %s: want only the primary's, no failover started past the deadline", attemptsOf(j))
	}
	if n := b.Prov["fallback"].Calls(); n != 0 {
		t.Fatalf("the fallback was called %d times after the job's deadline", n)
	}
}

// An attempt whose creation waited for the job's row (another transaction
// held it) until past the job's deadline is not sent: it is recorded as never
// sent, and the job fails by its deadline. It used to be sent, for the
// deadline to cut it at once.
func TestAttemptCreatedPastTheDeadlineIsNotSent(t *testing.T) {
	// Short, so that the row is held well under the store's lock wait (2 s)
	// even on a slow machine: past it the attempt would not be created at all.
	const deadline = 500 * time.Millisecond
	choosing, chosen := make(chan struct{}), make(chan struct{})
	gate := newStallGate(".(*orchestrator).failover", func() {
		close(choosing)
		<-chosen
	})
	b := racetest.New(t, racetest.Options{
		Route: race.Route{Deadline: deadline, MaxInflight: 1},
		Gate:  gate,
		Providers: []racetest.Provider{
			{Name: "primary", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
			{Name: "fallback", FirstByteTimeout: 100 * time.Millisecond, Respond: racetest.Hang}, // a short first-byte budget: room for a failover (failoverFits)
		}})
	job := b.Submit(t)
	<-choosing
	// The failover's target is chosen (before the deadline, as a rule); its
	// attempt's creation now waits for the job's row, held here until the
	// deadline has passed — less than the store's lock wait (2 s), so the
	// attempt is created then.
	ctx := context.Background()
	tx, err := b.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, job.ID); err != nil {
		t.Fatal(err)
	}
	close(chosen)
	pastDeadline(deadline)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	j := b.WaitSettled(t, job.ID)
	why := derefString(j.Error)
	if j.State != store.JobFailed || !strings.Contains(why, "deadline of "+deadline.String()+" passed") {
		t.Fatalf("job %s (%v): want it failed by its deadline", j.State, why)
	}
	if n := b.Prov["fallback"].Calls(); n != 0 {
		t.Fatalf("the fallback was called %d times after the job's deadline", n)
	}
	// Created past the deadline (the usual case) and recorded as never
	// sent; or, on a machine slow enough that the deadline passed before
	// the target was chosen, not created at all.
	if fb := racetest.AttemptOn(j, "fallback"); fb != nil && (fb.State != store.AttemptCancelled || !store.NotSent(*fb)) {
		t.Fatalf("the fallback's attempt is %s (%s): want it recorded as never sent", fb.State, fb.Error)
	}
}

// An adopted or resumed job's deadline counts from when it was read, not
// from when its race begins: here the conformance gate's read during the
// race's preparation (routing) lasts past the whole deadline, so the job is
// stopped as its deadline stops it — no attempt starts. The deadline used to
// be counted from the end of the preparation, so a job whose routing was slow
// had that much more time, and here a whole new deadline.
func TestResumedJobDeadlineCountsFromItsRead(t *testing.T) {
	const deadline = time.Second
	gate := newStallGate(".(*Runner).prepare", func() { pastDeadline(deadline) })
	b := racetest.New(t, racetest.Options{
		Route:     race.Route{Deadline: deadline},
		Gate:      gate,
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(racetest.ValidTriage)}},
	})
	j := b.WaitSettled(t, b.SubmitUnplanned(t).ID)
	gate.mustHaveStalled(t)
	if j.State != store.JobFailed || !strings.Contains(derefString(j.Error), "deadline of 1s passed") || len(j.Attempts) != 0 {
		t.Fatalf("job %s (%v) with %d attempts: want it failed by its deadline, with no attempt",
			j.State, derefString(j.Error), len(j.Attempts))
	}
	if n := b.Prov["primary"].Calls(); n != 0 {
		t.Fatalf("the primary was called %d times after the job's deadline", n)
	}
}
