package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// offerReturns runs st.OfferCompletion(c) with a caller's context that ends
// after a second (which OfferCompletion ignores, by design) and returns what
// it returned. The minute is only a hang's detector.
func offerReturns(t *testing.T, st *store.Store, c store.Completion) (store.Offered, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	type result struct {
		o   store.Offered
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := st.OfferCompletion(ctx, c)
		done <- result{o, err}
	}()
	select {
	case r := <-done:
		return r.o, r.err
	case <-time.After(time.Minute):
		t.Fatal("OfferCompletion had not returned a minute after its database calls could get no answer: one of them has no bound")
		return store.Offered{}, nil
	}
}

// stillInFlight checks that nothing was recorded for job jobID: it is running
// and so is its attempt.
func stillInFlight(t *testing.T, b *bundle, jobID string) {
	t.Helper()
	j, err := b.st.GetJobAny(context.Background(), jobID)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != store.JobRunning || len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptRunning {
		t.Fatalf("job %s, attempts %+v: want it and its attempt still running", j.State, j.Attempts)
	}
}

// A valid answer whose batch failed, and whose database could not then be
// asked whether the win committed — the reads get no answer (here: no
// connection; a connection gone silent alike) — is reported failed once the
// reads' bounds have passed, and the attempt stays in flight for recovery.
// Before, those reads ran without any bound (the caller's cancellation
// dropped with its deadline), and the answer, and the runner that offered it,
// waited for ever.
func TestWinOfferReturnsWhenItsReadsGetNoAnswer(t *testing.T) {
	b := setup(t)
	j, c := runningJob(t, b.st, "acme", "silent-win")
	st := exhaustedStore(t, b)
	o, err := offerReturns(t, st, c)
	if err == nil || o.Won {
		t.Fatalf("offer with no connection: offered %+v, err %v; want an error", o, err)
	}
	if !store.Unavailable(err) {
		t.Fatalf("err = %v, want the database unavailable", err)
	}
	stillInFlight(t, b, j.ID)
}

// connOnWinCommit is an Observer that, once a win's batch has answered, takes
// the pool's connection and keeps it: what comes after the batch gets none.
type connOnWinCommit struct {
	pool *pgxpool.Pool
	t    *testing.T
	once sync.Once
}

func (*connOnWinCommit) DurableCommit()    {}
func (*connOnWinCommit) Batch(string, int) {}
func (o *connOnWinCommit) CommitWait(kind string, _ time.Duration) {
	if kind == "win" {
		o.once.Do(func() { holdConn(o.t, o.pool) })
	}
}

// The late path of a valid answer (its compare-and-swap found the job's
// version moved) runs its transaction without the caller's cancellation,
// within a bound: when its transaction gets no answer, the offer is reported
// failed and the attempt stays in flight. Before, it waited for ever.
func TestLateWinReturnsWhenItsTransactionGetsNoAnswer(t *testing.T) {
	b := setup(t)
	j, c := runningJob(t, b.st, "acme", "silent-late-win")
	obs := &connOnWinCommit{t: t}
	st, pool := onePoolStore(t, b, store.Options{Observer: obs})
	obs.pool = pool
	c.ReadVersion++ // the batch's compare-and-swap fails: the late path decides
	o, err := offerReturns(t, st, c)
	if err == nil || o.Won {
		t.Fatalf("late win with no connection: offered %+v, err %v; want an error", o, err)
	}
	if !store.Unavailable(err) {
		t.Fatalf("err = %v, want the database unavailable", err)
	}
	stillInFlight(t, b, j.ID)
}
