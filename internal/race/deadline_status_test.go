package race_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// statusAtDeadline is a provider whose error status reaches the router only
// once the job's deadline has cut the call's context: the order runAttempt
// sees when a 503 arrives a moment before the deadline and the deadline's
// timer fires before the call's cause is read. returned is closed once its
// call has returned.
type statusAtDeadline struct {
	name     string
	returned chan struct{}
	once     sync.Once
}

func (p *statusAtDeadline) Name() string { return p.name }

func (p *statusAtDeadline) Complete(ctx context.Context, _ *providers.Request) (*providers.Response, error) {
	defer p.once.Do(func() { close(p.returned) })
	<-ctx.Done()
	return nil, providers.ClassifyStatus(p.name, 503, "", "upstream overloaded, try again")
}

// An error the provider answered with (an HTTP status and its body) is the
// attempt's end, whatever cut the call's context by the time the router read
// it: only a call that ended because it was cut (a cancellation) is the job's
// deadline's. The 503 used to be relabelled "cut by the job's deadline after
// the request was sent, before any response byte" and recorded unknown —
// blocking the job for a resolution the provider's own answer made needless,
// its message lost and its breaker excused.
func TestProviderStatusAtTheDeadlineIsNotTheDeadlinesCut(t *testing.T) {
	const deadline = 300 * time.Millisecond
	p := &statusAtDeadline{name: "primary", returned: make(chan struct{})}
	b := racetest.New(t, racetest.Options{Route: race.Route{Deadline: deadline},
		Providers: []racetest.Provider{{Name: "primary", Adapter: p, Timeout: time.Hour}}})
	job := b.Submit(t)
	<-p.returned
	j := b.WaitSettled(t, job.ID)
	a := attemptBy(j, "primary")
	if a == nil || a.State != store.AttemptFailed || !strings.Contains(strings.ReplaceAll(string(a.Error), " ", ""), `"status":503`) || !strings.Contains(string(a.Error), "upstream overloaded") {
		t.Fatalf("attempts %s: want the primary failed with its 503 and the provider's message, not the deadline's cut", attemptsOf(j))
	}
	if j.State != store.JobFailed {
		t.Fatalf("job %s (%s): want it failed — the provider's 503 is a known outcome", j.State, derefString(j.Error))
	}
}

// causeAtDeadline is a provider whose call, cut by the job's deadline,
// returns the context's cause wrapped as a plain error (not a cancellation
// its adapter classified): the kind the router gives it is not "cancelled".
type causeAtDeadline struct{ name string }

func (p *causeAtDeadline) Name() string { return p.name }

func (p *causeAtDeadline) Complete(ctx context.Context, _ *providers.Request) (*providers.Response, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("read the answer: %w", context.Cause(ctx))
}

// A call the deadline cut is the deadline's, whatever kind its adapter or
// transport gave the cut read: only an error the provider answered with (an
// error status, an error body) is kept as its own. Keyed on "cancelled"
// alone, this call was recorded failed and blamed on the provider.
func TestCallCutByTheDeadlineIsTheDeadlinesWhateverItsKind(t *testing.T) {
	p := &causeAtDeadline{name: "primary"}
	b := racetest.New(t, racetest.Options{Route: race.Route{Deadline: 300 * time.Millisecond},
		Providers: []racetest.Provider{{Name: "primary", Adapter: p, Timeout: time.Hour}}})
	job := b.Submit(t)
	j := b.WaitSettled(t, job.ID)
	if a := attemptBy(j, "primary"); a == nil || a.State != store.AttemptUnknown {
		t.Fatalf("attempts %s: want the primary unknown, cut by the job's deadline after it was sent", attemptsOf(j))
	}
}
