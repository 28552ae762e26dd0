package race_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// Acceptance 1: the primary starts first and finishes last; the hedge wins.
func TestHedgeWinsInReverseOrder(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, race.Route{HedgeAfter: 10 * time.Millisecond, KeepLosers: true},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-release // finishes only after the hedge has won
			return providers.Step{Output: otherTriage}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	j := b.waitSettled(t, job.ID)
	close(release)
	b.stop() // waits for the primary's late result to be recorded
	j = b.job(t, job.ID)
	hedge, primary := attemptBy(j, "fallback"), attemptBy(j, "primary")
	if j.State != store.JobSucceeded || *j.CompletedBy != hedge.ID {
		t.Fatalf("job %s completed_by %v, want the hedge %s", j.State, j.CompletedBy, hedge.ID)
	}
	if hedge.Role != store.RoleHedge || hedge.State != store.AttemptWon || primary.Role != store.RolePrimary || primary.State != store.AttemptLost {
		t.Fatalf("attempts: hedge %s/%s primary %s/%s", hedge.Role, hedge.State, primary.Role, primary.State)
	}
	if strings.Contains(string(j.Result), "Primary's slower") {
		t.Fatal("the loser's payload is on the job")
	}
	if len(j.RaceEvents) != 1 || *j.RaceEvents[0].AttemptID != primary.ID || j.RaceEvents[0].Kind != "lost" {
		t.Fatalf("race events %+v", j.RaceEvents)
	}
	if j.Version != hedge.ReadVersion+1 {
		t.Fatalf("version %d, want read version %d + 1", j.Version, hedge.ReadVersion)
	}
}

// Acceptance 3: a silent primary is rescued by the hedge; one call each; the
// primary is cancelled once the hedge wins.
func TestHedgeRescuesSilentPrimary(t *testing.T) {
	b := setup(t, race.Route{HedgeAfter: 20 * time.Millisecond},
		provSpec{name: "primary", respond: hang},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	j := b.waitSettled(t, job.ID)
	b.stop()
	j = b.job(t, job.ID)
	if j.State != store.JobSucceeded || *j.CompletedBy != attemptBy(j, "fallback").ID {
		t.Fatalf("state %s completed_by %v", j.State, j.CompletedBy)
	}
	if b.prov["primary"].Calls() != 1 || b.prov["fallback"].Calls() != 1 {
		t.Fatalf("calls primary=%d fallback=%d, want 1 each", b.prov["primary"].Calls(), b.prov["fallback"].Calls())
	}
	if s := attemptBy(j, "primary").State; s != store.AttemptCancelled {
		t.Fatalf("primary attempt %s, want cancelled", s)
	}
}

// Acceptance 2 (runner half): a timeout is unknown, not failed, and blocks.
func TestTimeoutIsUnknownAndBlocks(t *testing.T) {
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: hang, timeout: 50 * time.Millisecond},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobUnknown || len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptUnknown {
		t.Fatalf("job %s attempts %+v", j.State, j.Attempts)
	}
	if j.Error == nil || !strings.Contains(*j.Error, "resolve") {
		t.Fatalf("error does not say what to do: %v", j.Error)
	}
	if b.prov["fallback"].Calls() != 0 {
		t.Fatal("the fallback was called while the primary's outcome is unknown")
	}
	_, err := b.st.CreateAttempt(t.Context(), store.NewAttempt{JobID: job.ID, Provider: "fallback", Role: store.RoleFailover})
	if !errors.Is(err, store.ErrAttemptBlocked) {
		t.Fatalf("new attempt while unknown: %v", err)
	}
	// Resolution as failed lets the job go on to the fallback.
	resume, err := b.st.ResolveAttempt(t.Context(), store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed", Note: "test"})
	if err != nil || !resume {
		t.Fatalf("resolve: resume=%v err=%v", resume, err)
	}
	b.runner.Submit(job)
	j = b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || *j.CompletedBy != attemptBy(j, "fallback").ID || attemptBy(j, "fallback").Role != store.RoleFailover {
		t.Fatalf("after resolve: %s %+v", j.State, j.Attempts)
	}
	if b.prov["primary"].Calls() != 1 {
		t.Fatalf("primary called %d times", b.prov["primary"].Calls())
	}
}

// Acceptance 4a: 429 with Retry-After: 1 is retried on the same provider, no sooner than 1 s.
func TestRetryHonoursRetryAfter(t *testing.T) {
	var mu sync.Mutex
	var starts []time.Time
	b := setup(t, race.Route{},
		provSpec{name: "primary", maxRetries: 1,
			onCall: func(int, *providers.Request) { mu.Lock(); starts = append(starts, time.Now()); mu.Unlock() },
			respond: func(call int, _ *providers.Request) providers.Step {
				if call == 1 {
					return providers.Step{Status: 429, RetryAfter: time.Second}
				}
				return providers.Step{Output: validTriage}
			}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 {
		t.Fatalf("job %s with %d attempts", j.State, len(j.Attempts))
	}
	if j.Attempts[1].Provider != "primary" || j.Attempts[1].Role != store.RoleRetry || j.Attempts[1].State != store.AttemptWon {
		t.Fatalf("second attempt %+v", j.Attempts[1])
	}
	mu.Lock()
	gap := starts[1].Sub(starts[0])
	mu.Unlock()
	if gap < time.Second {
		t.Fatalf("retried after %s, sooner than Retry-After 1s", gap)
	}
	if b.prov["fallback"].Calls() != 0 {
		t.Fatal("failed over instead of retrying")
	}
}

// Acceptance 4b: a 400 context-length error is never retried on the same
// provider; it fails over only to a target with a larger context window.
func TestContextLengthNeverRetriedSameProvider(t *testing.T) {
	tooLong := func(int, *providers.Request) providers.Step {
		return providers.Step{Error: &providers.Error{Kind: providers.KindContextLength, StatusCode: 400, Message: "maximum context length exceeded"}}
	}
	same := setup(t, race.Route{},
		provSpec{name: "primary", maxRetries: 3, respond: tooLong},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	js := same.waitSettled(t, same.submit(t).ID)
	if same.prov["primary"].Calls() != 1 || same.prov["fallback"].Calls() != 0 || js.State != store.JobFailed {
		t.Fatalf("equal windows: primary %d calls, fallback %d calls, job %s; want 1, 0, failed",
			same.prov["primary"].Calls(), same.prov["fallback"].Calls(), js.State)
	}
	b := setup(t, race.Route{},
		provSpec{name: "primary", maxRetries: 3, respond: tooLong},
		provSpec{name: "fallback", respond: ok(validTriage), window: 200000},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	if b.prov["primary"].Calls() != 1 {
		t.Fatalf("primary called %d times, want 1", b.prov["primary"].Calls())
	}
	if j.State != store.JobSucceeded || attemptBy(j, "fallback").Role != store.RoleFailover {
		t.Fatalf("job %s attempts %+v", j.State, j.Attempts)
	}
}

// Acceptance 4c: a persistent 503 is retried within the bound, then fails over;
// max_attempts is never exceeded.
func TestPersistent503FailsOverWithinBounds(t *testing.T) {
	always503 := func(int, *providers.Request) providers.Step { return providers.Step{Status: 503} }
	b := setup(t, race.Route{},
		provSpec{name: "primary", maxRetries: 2, respond: always503},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	if b.prov["primary"].Calls() != 3 || j.State != store.JobSucceeded || len(j.Attempts) != 4 {
		t.Fatalf("primary calls %d, state %s, attempts %d", b.prov["primary"].Calls(), j.State, len(j.Attempts))
	}
	if last := j.Attempts[3]; last.Provider != "fallback" || last.Role != store.RoleFailover {
		t.Fatalf("last attempt %+v", last)
	}

	tight := setup(t, race.Route{MaxAttempts: 2},
		provSpec{name: "primary", maxRetries: 5, respond: always503},
		provSpec{name: "fallback", respond: always503},
	)
	j = tight.waitSettled(t, tight.submit(t).ID)
	if j.State != store.JobFailed || len(j.Attempts) != 2 {
		t.Fatalf("max_attempts 2: state %s with %d attempts", j.State, len(j.Attempts))
	}
	if j.Error == nil || !strings.Contains(*j.Error, "max_attempts") {
		t.Fatalf("error does not explain the bound: %v", j.Error)
	}
}

// Invalid output fails over and never wins; the violation is on the attempt.
func TestInvalidOutputFailsOver(t *testing.T) {
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: ok(`{"category":"technical","priority":"high","summary":"Login broken for the user.","needs_human":false,"confidence":0.9}`)},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	p := attemptBy(j, "primary")
	if p.State != store.AttemptInvalid || !strings.Contains(string(p.ValidationErrors), "no_extra_keys") || !strings.Contains(string(p.ValidationErrors), "/confidence") {
		t.Fatalf("primary %s violations %s", p.State, p.ValidationErrors)
	}
	if j.State != store.JobSucceeded || *j.CompletedBy != attemptBy(j, "fallback").ID {
		t.Fatalf("job %s", j.State)
	}
}

// A content-policy rejection is reported to the caller, not failed over.
func TestContentPolicyStops(t *testing.T) {
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Error: &providers.Error{Kind: providers.KindContentPolicy, StatusCode: 400, Message: "flagged by the safety system"}}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobFailed || b.prov["fallback"].Calls() != 0 {
		t.Fatalf("state %s fallback calls %d", j.State, b.prov["fallback"].Calls())
	}
	if j.Error == nil || !strings.Contains(*j.Error, "content_policy") || !strings.Contains(*j.Error, "safety system") {
		t.Fatalf("error does not carry the reason: %v", j.Error)
	}
}

// A Retry-After longer than the longest the router waits fails over instead of
// holding the job.
func TestLongRetryAfterFailsOver(t *testing.T) {
	b := setup(t, race.Route{},
		provSpec{name: "primary", maxRetries: 3, respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 429, RetryAfter: time.Hour}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	if b.prov["primary"].Calls() != 1 || j.State != store.JobSucceeded || attemptBy(j, "fallback").Role != store.RoleFailover {
		t.Fatalf("primary calls %d, job %s %+v", b.prov["primary"].Calls(), j.State, j.Attempts)
	}
}

// refuseAfter admits a provider n times, then refuses it (a breaker opening).
type refuseAfter struct {
	mu    sync.Mutex
	left  map[string]int
	calls map[string]int
}

func (r *refuseAfter) Admit(p string) (func(race.Outcome), bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[p]++
	if n, limited := r.left[p]; limited && r.calls[p] > n {
		return nil, false, "breaker open"
	}
	return func(race.Outcome) {}, true, ""
}

// A retry on a provider whose breaker opened meanwhile fails over (SPEC §6.3).
func TestRetryRefusedByBreakerFailsOver(t *testing.T) {
	b := setupWith(t, race.Route{}, &refuseAfter{left: map[string]int{"primary": 1}, calls: map[string]int{}},
		provSpec{name: "primary", maxRetries: 2, respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 503} }},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || b.prov["primary"].Calls() != 1 || attemptBy(j, "fallback") == nil ||
		attemptBy(j, "fallback").Role != store.RoleFailover {
		t.Fatalf("job %s, primary calls %d, attempts %+v", j.State, b.prov["primary"].Calls(), j.Attempts)
	}
}
