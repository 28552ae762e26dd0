package race_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// lateAnswerer is a provider that stays silent until answer is closed, then
// answers validly — unless its call was cut first: an answer that arrives
// after the request was cut is never read (the connection is gone).
// returned is closed once its call has returned, either way.
type lateAnswerer struct {
	name     string
	answer   chan struct{}
	returned chan struct{}
	once     sync.Once
}

func (p *lateAnswerer) Name() string { return p.name }

func (p *lateAnswerer) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	defer p.once.Do(func() { close(p.returned) })
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.answer:
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return &providers.Response{Content: racetest.ValidTriage, Model: req.Model, FinishReason: "stop"}, nil
	}
}

// The job's deadline bounds an attempt's call by itself, not only through
// the orchestration's select: here the orchestration is held past the
// deadline — a hedge's creation waits for the job's row, which another
// transaction holds — while the primary's call is still out. The call is cut
// at the deadline, and recorded as the deadline's cut always is (unknown: no
// response byte came), so an answer that comes after the deadline does not
// win the job. It used to run on until the orchestration next selected: the
// late answer won a job past its deadline. Found by review.
func TestAttemptCallIsCutAtTheDeadlineWhileTheOrchestrationIsBusy(t *testing.T) {
	const deadline = time.Second
	primary := &lateAnswerer{name: "primary", answer: make(chan struct{}), returned: make(chan struct{})}
	choosing, chosen := make(chan struct{}), make(chan struct{})
	gate := newStallGate(".(*orchestrator).hedgeDue", func() {
		close(choosing)
		<-chosen
	})
	b := racetest.New(t, racetest.Options{
		Route: race.Route{Deadline: deadline, HedgeAfter: 400 * time.Millisecond},
		Gate:  gate,
		Providers: []racetest.Provider{
			{Name: "primary", Adapter: primary, Timeout: time.Hour},
			{Name: "fallback", Respond: racetest.Hang},
		}})
	job := b.Submit(t)
	<-choosing
	// The hedge's target is chosen; its attempt's creation now waits for the
	// job's row, held here (well under the store's lock wait) until the
	// primary's call has returned.
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
	close(primary.answer) // the provider's answer comes, past the job's deadline
	<-primary.returned
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	j := b.WaitSettled(t, job.ID)
	gate.mustHaveStalled(t)
	if j.State == store.JobSucceeded {
		t.Fatalf("job succeeded by an answer that came after its deadline of %s: %s", deadline, attemptsOf(j))
	}
	p := racetest.AttemptOn(j, "primary")
	if p == nil || p.State != store.AttemptUnknown || !strings.Contains(string(p.Error), "cut by the job's deadline after the request was sent") {
		t.Fatalf("attempts %s: want the primary's unknown, cut by the job's deadline", attemptsOf(j))
	}
	if n := b.Prov["fallback"].Calls(); n != 0 {
		t.Fatalf("the fallback was called %d times after the job's deadline", n)
	}
}
