package race_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// endings records the runner's attempt ends and job settlements.
type endings struct {
	settlements
	attempts map[string]int
	finished chan string // each attempt's end, as it is counted
}

func (e *endings) AttemptFinished(_, _, state string, _ providers.Kind, _ time.Duration, _ providers.Usage) {
	e.mu.Lock()
	e.attempts[state]++
	e.mu.Unlock()
	e.finished <- state
}

// A stalled attempt's valid answer that comes after the attempt was resolved
// `succeeded` (its lease expired, and an operator or reconciliation resolved
// it) is not a second win: the runner counts the attempt's end as stored
// (won, once: the resolution counted nothing), but neither the job's
// settlement (the resolution settled it) nor a lost race, and its race ends.
func TestLateAnswerAfterSucceededResolutionIsNotASecondSettlement(t *testing.T) {
	release := make(chan struct{})
	sent := make(chan struct{})
	var once sync.Once
	obs := &endings{settlements: settlements{counts: map[string]int{}}, attempts: map[string]int{}, finished: make(chan string, 8)}
	b := setupObserved(t, race.Route{KeepLosers: true}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			once.Do(func() { close(sent) })
			<-release
			return providers.Step{Output: validTriage}
		}})
	ctx := context.Background()
	job := b.SubmitUnplanned(t)
	<-sent
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ResolveAttempt(ctx, store.Resolution{JobID: job.ID, Seq: 1, Outcome: "succeeded",
		Result: []byte(`{"by":"operator"}`), Note: "test"}); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-obs.finished // the answer was offered and its attempt's end counted
	b.stop()       // the job's run has ended
	j := b.Job(t, job.ID)
	if j.State != store.JobSucceeded || string(j.Result) != `{"by": "operator"}` {
		t.Fatalf("job %s result %s, want succeeded with the operator's result", j.State, j.Result)
	}
	var discarded int
	if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM race_events WHERE job_id = $1 AND kind = 'discarded'`, job.ID).Scan(&discarded); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if discarded != 1 || obs.attempts[store.AttemptWon] != 1 || obs.attempts[store.AttemptLost] != 0 || obs.counts[store.JobSucceeded] != 0 {
		t.Fatalf("discarded events %d, attempts ended %v, settlements %v: want the answer discarded, its attempt's end counted as stored (won) and no settlement counted",
			discarded, obs.attempts, obs.counts)
	}
}
