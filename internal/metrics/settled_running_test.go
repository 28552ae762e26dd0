package metrics_test

import (
	"context"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// settledRecord is the metrics observer that also keeps every state a job
// run was counted as settled with.
type settledRecord struct {
	*metrics.Metrics
	mu     sync.Mutex
	states []string
}

func (s *settledRecord) JobSettled(state string) {
	s.Metrics.JobSettled(state)
	s.mu.Lock()
	s.states = append(s.states, state)
	s.mu.Unlock()
}

// router_jobs_settled_total{state} is documented as succeeded, failed,
// unknown or cancelled (docs/operations.md). When the winning answer cannot
// be recorded (a database error), the attempt is abandoned to recovery and
// the job stays running: the run must not count it as settled (it was, with
// state "running", a label value the docs do not list, and the job was
// counted again when it did settle). Found by review.
func TestJobsSettledNeverCountsARunningJob(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	obs := &settledRecord{Metrics: m}
	b := racetest.New(t, racetest.Options{Observer: obs, Providers: []racetest.Provider{
		{Name: "p", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: racetest.ValidTriage} }},
	}})
	ctx := context.Background()
	// The database refuses the win (as a failing disk or a lost connection
	// would): CompleteJob fails after its retries.
	if _, err := b.DB.Pool.Exec(ctx, `
		CREATE FUNCTION refuse_win() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'disk full'; END $$;
		CREATE TRIGGER refuse_win BEFORE UPDATE ON jobs FOR EACH ROW
			WHEN (NEW.state = 'succeeded') EXECUTE FUNCTION refuse_win();`); err != nil {
		t.Fatal(err)
	}
	job := b.Submit(t)
	b.Stop() // waits for the job's run to end: whatever it reports has been reported
	j := b.Job(t, job.ID)
	if j.State != store.JobRunning {
		t.Fatalf("precondition: job %s, want it left running (its win not recorded)", j.State)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for _, state := range obs.states {
		got := counterValue(t, m, "router_jobs_settled_total", map[string]string{"state": state})
		t.Errorf("router_jobs_settled_total{state=%q} = %v for job %s, which is still %s in the database: a job that did not settle was counted as settled",
			state, got, j.ID, j.State)
	}
}
