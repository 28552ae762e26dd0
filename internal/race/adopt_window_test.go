package race_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// tooLong is a provider's context-length rejection.
func tooLong(int, *providers.Request) providers.Step {
	return providers.Step{Error: &providers.Error{Kind: providers.KindContextLength, StatusCode: 400, Message: "maximum context length exceeded"}}
}

// windowRoute is the providers of the context-window tests, in route order:
// "small", whose window cannot hold the triage prompt plus its max_tokens
// (300) as routing counts it; "primary" and "twin", two deployments of one
// window, of which the primary rejects the request as too long (the
// provider's count is larger than the router's); and "big", with a larger
// window. primary answers through primaryRespond.
func windowRoute(primaryRespond func(int, *providers.Request) providers.Step) []racetest.Provider {
	return []racetest.Provider{
		{Name: "small", Respond: racetest.OK(validTriage), ContextWindow: 350},
		{Name: "primary", Respond: primaryRespond, ContextWindow: 128000},
		{Name: "twin", Respond: tooLong, ContextWindow: 128000},
		{Name: "big", Respond: racetest.OK(validTriage), ContextWindow: 1000000},
	}
}

// attemptProviders is the provider of each of the job's rows in the attempts
// table, in seq order.
func attemptProviders(t *testing.T, b *racetest.Bundle, jobID string) []string {
	t.Helper()
	rows, err := b.DB.Pool.Query(context.Background(), `SELECT provider FROM attempts WHERE job_id = $1 ORDER BY seq`, jobID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkWindowSkips fails t unless the job was won by winner with no attempt
// ever created for "small" or "twin", and its routing says why each of them
// was not eligible.
func checkWindowSkips(t *testing.T, b *racetest.Bundle, j *store.Job, winner string) {
	t.Helper()
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s (%v), want it won on %s", j.State, derefString(j.Error), winner)
	}
	got := attemptProviders(t, b, j.ID)
	for _, p := range got {
		if p == "small" || p == "twin" {
			t.Fatalf("attempts on %v: an attempt was created for %s, whose window cannot hold the request", got, p)
		}
	}
	if got[len(got)-1] != winner {
		t.Fatalf("attempts on %v, want the last on %s", got, winner)
	}
	var routing []race.Decision
	if err := json.Unmarshal(j.Routing, &routing); err != nil {
		t.Fatalf("routing %s: %v", j.Routing, err)
	}
	why := map[string]race.Decision{}
	for _, d := range routing {
		if d.Event == "" {
			why[d.Provider] = d
		}
	}
	for p, want := range map[string]string{"small": "context window too small: the prompt needs", "twin": "context window too small: primary rejected the request as too long"} {
		if d := why[p]; d.Eligible || !strings.Contains(d.Reason, want) {
			t.Errorf("routing of %s: eligible %v, reason %q; want not eligible, %q (routing %s)", p, d.Eligible, d.Reason, want, j.Routing)
		}
	}
}

// SPEC §8, §17: a job handed over by a draining replica after a target
// rejected it as too long is adopted by another replica that derives the
// route's eligibility as the first plan did — a window too small for the
// counted prompt — and as the rejection did when it came: no target whose
// window is no larger than the rejecting one's. The adopter creates no
// attempt for either, and its routing says why. (Found in review: the
// adopter sent the request to the twin deployment, for a certain
// context_length_exceeded.)
func TestAdoptedJobSkipsWindowsTooSmall(t *testing.T) {
	called, release := make(chan struct{}), make(chan struct{})
	first := racetest.New(t, racetest.Options{LeaseOwner: "replica-1", Providers: windowRoute(func(c int, r *providers.Request) providers.Step {
		close(called)
		<-release
		return tooLong(c, r)
	})})
	job := first.Submit(t)
	<-called
	first.Runner.Drain(0) // SIGTERM while the primary's call runs
	close(release)        // the primary rejects the request as too long: no failover while draining
	first.Stop()
	if got := attemptProviders(t, first, job.ID); len(got) != 1 || got[0] != "primary" {
		t.Fatalf("attempts on %v before the hand-over, want only primary's", got)
	}

	adopter := racetest.New(t, racetest.Options{DB: first.DB, LeaseOwner: "replica-2", Providers: windowRoute(tooLong)})
	adopter.Runner.RecoverOnce(context.Background(), 10)
	checkWindowSkips(t, adopter, adopter.WaitSettled(t, job.ID), "big")
	if n := adopter.Prov["twin"].Calls() + adopter.Prov["small"].Calls(); n != 0 {
		t.Fatalf("the adopter called a target too small %d times", n)
	}
}

// SPEC §6.7, §8: a job resumed after its unknown attempt was resolved
// derives the same skips: the twin of the target that rejected the request
// as too long is not tried.
func TestResumedJobSkipsWindowsTooSmall(t *testing.T) {
	providersOf := windowRoute(tooLong)
	// big's first call ends unknown (no answer before the attempt's timeout);
	// "bigger" then takes the resumed race.
	providersOf[3].Respond = func(int, *providers.Request) providers.Step {
		return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true, Message: "no answer"}}
	}
	providersOf = append(providersOf, racetest.Provider{Name: "bigger", Respond: racetest.OK(validTriage), ContextWindow: 2000000})
	b := racetest.New(t, racetest.Options{Providers: providersOf})
	ctx := context.Background()
	job := b.Submit(t)
	if j := b.WaitSettled(t, job.ID); j.State != store.JobUnknown {
		t.Fatalf("job %s (%v), want unknown on big's attempt", j.State, derefString(j.Error))
	}
	seq := attemptBy(b.Job(t, job.ID), "big").Seq
	resume, err := b.Store.ResolveAttempt(ctx, store.Resolution{JobID: job.ID, Seq: seq, Outcome: "failed", Note: "operator: no record"})
	if err != nil || !resume {
		t.Fatalf("resolve: resume=%v err=%v", resume, err)
	}
	b.Runner.Submit(job)
	checkWindowSkips(t, b, b.WaitSettled(t, job.ID), "bigger")
	if n := b.Prov["twin"].Calls(); n != 0 {
		t.Fatalf("the resumed race called the twin %d times", n)
	}
}
