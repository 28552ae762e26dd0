package race_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// causeAtShutdown is a provider whose call, cut by the router's shutdown,
// returns the context's cause wrapped as a plain error — what net/http's
// Transport returns for a request whose context was cancelled with a cause
// (context.Cause), and what an adapter that does not classify its own
// cancellation passes on — not a cancellation of kind "cancelled".
type causeAtShutdown struct {
	name   string
	called chan struct{}
}

func (p *causeAtShutdown) Name() string { return p.name }

func (p *causeAtShutdown) Complete(ctx context.Context, _ *providers.Request) (*providers.Response, error) {
	close(p.called)
	<-ctx.Done()
	return nil, fmt.Errorf("read the answer: %w", context.Cause(ctx))
}

// SPEC §17: no job becomes unknown — let alone failed — because a process was
// told to stop. A silent call cut by the end of the drain is the shutdown's
// (unknown, kind shutdown, not counted against the provider), whatever kind
// its adapter gave the cut read, as a call cut by the job's deadline is the
// deadline's (TestCallCutByTheDeadlineIsTheDeadlinesWhateverItsKind). Keyed
// on "cancelled" alone, it is recorded failed and blamed on the provider, and
// a job with nothing else to try is settled failed by the stop.
func TestCallCutByTheShutdownIsTheShutdownsWhateverItsKind(t *testing.T) {
	p := &causeAtShutdown{name: "primary", called: make(chan struct{})}
	b := racetest.New(t, racetest.Options{Providers: []racetest.Provider{{Name: "primary", Adapter: p, Timeout: time.Hour}}})
	job := b.Submit(t)
	<-p.called
	b.Runner.Drain(0) // SIGTERM while the attempt waits for its first byte
	cut, cancel := context.WithCancel(context.Background())
	cancel()
	b.Runner.Stop(cut) // the drain ran out (or a second signal)
	j, err := b.Store.GetJobAny(context.Background(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	a := attemptBy(j, "primary")
	if a == nil || a.State != store.AttemptUnknown || errorKind(t, a) != "shutdown" {
		t.Errorf("job %s, attempts %s: want the primary unknown with kind shutdown (cut by the router's stop before any byte), not a provider failure",
			j.State, attemptsOf(j))
	}
	if j.State == store.JobFailed {
		t.Errorf("job failed only because its router was stopped: %s", derefString(j.Error))
	}
}
