package race_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// statusAtCut is a provider whose error status reaches the router only once
// the attempt's context has been cut (by another attempt's win, by the job's
// cancellation): the order runAttempt sees when a 503 arrives a moment before
// the cut and the cut lands before the call's cause is read. called is
// closed when its call begins.
type statusAtCut struct {
	name   string
	called chan struct{}
	once   sync.Once
}

func (p *statusAtCut) Name() string { return p.name }

func (p *statusAtCut) Complete(ctx context.Context, _ *providers.Request) (*providers.Response, error) {
	p.once.Do(func() { close(p.called) })
	<-ctx.Done()
	return nil, providers.ClassifyStatus(p.name, 503, "", "upstream overloaded, try again")
}

// watchedFallback is a breaker set whose releases of the fallback's attempts
// report their outcomes on w.released.
func watchedFallback(t *testing.T) *outcomeWatch {
	set := breaker.New(map[string]breaker.Settings{"fallback": {ConsecutiveFailures: 100, OpenFor: time.Minute}}, breaker.Options{})
	t.Cleanup(set.Close)
	return &outcomeWatch{Set: set, provider: "fallback", released: make(chan race.Outcome, 16)}
}

// A hedge loser whose provider answered with an error status before the
// winner's cut reached it failed on its own: it is recorded failed with the
// provider's status and message, and its breaker counts the failure, as an
// error status at the job's deadline is (TestProviderStatusAtTheDeadlineIsNotTheDeadlinesCut).
// It used to be recorded "cancelled: another attempt won", the provider's
// answer lost and its breaker told nothing.
func TestLosersErrorStatusIsKept(t *testing.T) {
	fb := &statusAtCut{name: "fallback", called: make(chan struct{})}
	adm := watchedFallback(t)
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: 50 * time.Millisecond, MaxInflight: 2}, Admission: adm,
		Providers: []racetest.Provider{
			{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
				<-fb.called // answers once its hedge is in flight
				return providers.Step{Output: validTriage}
			}},
			{Name: "fallback", Adapter: fb},
		}})
	job := b.Submit(t)
	j := b.WaitSettled(t, job.ID)
	o := <-adm.released // after the fallback's call has ended and its end was recorded
	a := attemptBy(j, "fallback")
	if j.State != store.JobSucceeded || a == nil || a.Role != store.RoleHedge {
		t.Fatalf("set-up: job %s, attempts %s: want the primary's win with the fallback as its hedge", j.State, attemptsOf(j))
	}
	j = b.Job(t, job.ID) // the loser's end is recorded after the win
	a = attemptBy(j, "fallback")
	if a.State != store.AttemptFailed || !strings.Contains(strings.ReplaceAll(string(a.Error), " ", ""), `"status":503`) || !strings.Contains(string(a.Error), "upstream overloaded") {
		t.Fatalf("attempts %s (fallback's error %s): want the hedge loser failed with its provider's 503 and message, not cancelled as a loser", attemptsOf(j), a.Error)
	}
	if o != race.OutcomeFailure {
		t.Fatalf("the fallback's breaker was told %v (1=failure, 2=ignored): want its 503 counted as a failure", o)
	}
}

// The same for an attempt whose job the caller cancelled after its provider
// had answered with an error status: the store has settled the attempt
// cancelled with its job, but its breaker still counts the 503.
func TestCancelledJobsErrorStatusReachesTheBreaker(t *testing.T) {
	fb := &statusAtCut{name: "fallback", called: make(chan struct{})}
	adm := watchedFallback(t)
	b := racetest.New(t, racetest.Options{Admission: adm,
		Providers: []racetest.Provider{{Name: "fallback", Adapter: fb}}})
	job := b.Submit(t)
	<-fb.called
	if err := b.Store.CancelJob(context.Background(), job.Owner, job.ID); err != nil {
		t.Fatal(err)
	}
	if o := <-adm.released; o != race.OutcomeFailure {
		t.Fatalf("the fallback's breaker was told %v (1=failure, 2=ignored): want the 503 its provider answered before the job's cancellation reached the call counted as a failure", o)
	}
	if j := b.WaitSettled(t, job.ID); j.State != store.JobCancelled {
		t.Fatalf("job %s, want cancelled", j.State)
	}
}
