package race_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// The running mark waits for the attempt's row up to the store's lock wait,
// as the job's other transitions do: a transaction that holds the row (an
// operator's open psql transaction, a DDL statement's lock) no longer holds
// the whole race — its deadline, its other attempts' results — for as long
// as it lasts. The mark gives up and the attempt is not sent; its record as
// never sent needs the same row, so it is left to its lease (recovery marks
// it unknown, and reconciliation finds it never sent), as is the job: the run
// ends while the row is still held. It used to wait for the row for as long
// as it was held.
func TestRunningMarkWaitsForAHeldRowBoundedly(t *testing.T) {
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 503} // no retries configured: fails over
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	var (
		once sync.Once
		held pgx.Tx
	)
	t.Cleanup(func() {
		if held != nil {
			held.Rollback(context.Background())
		}
	})
	b.st.SetAfterCreateAttempt(func(a *store.Attempt) error {
		if a.Provider != "fallback" {
			return nil
		}
		var err error
		once.Do(func() {
			ctx := context.Background()
			if held, err = b.db.Pool.Begin(ctx); err == nil {
				_, err = held.Exec(ctx, `SELECT FROM attempts WHERE id = $1 FOR UPDATE`, a.ID)
			}
		})
		return err
	})
	job := b.submit(t)
	changed, unsubscribe := b.listener.Subscribe(job.ID)
	defer unsubscribe()
	waitRunEnded(t, b, changed, job.ID)
	if n := b.prov["fallback"].Calls(); n != 0 {
		t.Fatalf("the fallback was called %d times although its running mark never got through", n)
	}
	if j := b.job(t, job.ID); j.State != store.JobRunning {
		t.Fatalf("job %s (%q), attempts %s: want running, left to its lease", j.State, derefString(j.Error), attemptsOf(j))
	}
}
