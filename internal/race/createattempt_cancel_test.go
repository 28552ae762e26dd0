package race_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The shutdown's cut (the drain run out, a second signal) cancels a job's
// run while a write of the attempt it is starting has its COMMIT in flight:
// the client gives up on it (pgx closes the connection), but PostgreSQL
// commits all the same once the COMMIT has reached it — as when the commit
// waits for a synchronous standby or a slow flush. A creation whose caller
// saw an error for a committed attempt left that attempt `starting`, known
// to no one, until its lease expired; recovery then marked it `unknown`
// (lease_expired), which blocks the job until an operator resolves an
// attempt that was never sent. Each write must end with the attempt
// recorded as never sent: `cancelled`, kind not_sent, and the job free for
// another replica. Found by review.
//
// The slow commit is a deferred constraint trigger on attempts that waits,
// inside COMMIT, for an advisory lock the test holds; the cancel request pgx
// sends as it closes the connection does not end that wait, as it does not
// end a synchronous standby's.
func TestAttemptWriteCutByTheShutdownIsRecordedNotSent(t *testing.T) {
	for _, c := range []struct {
		name, event, when, stmt string
	}{
		// The creation's COMMIT (CreateAttempt): without its fix, the attempt
		// stayed `starting`.
		{name: "creation", event: "INSERT", when: "true", stmt: "commit"},
		// The running mark's (MarkAttemptRunning): the attempt is `running`
		// without a request sent, which the record of it as never sent
		// settles as it settles a `starting` one.
		{name: "running mark", event: "UPDATE", when: "OLD.state = 'starting' AND NEW.state = 'running'", stmt: "state = 'running'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := newStoreTrace()
			db, plain := tracedDB(t, tr)
			b := racetest.New(t, racetest.Options{DB: db,
				Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
			slow := slowCommits(t, plain, c.event, c.when)
			job := b.SubmitUnplanned(t) // its only attempt is created by its run (start)
			write := tr.inFlight(t, slow.waitBlocked(t))
			if !strings.Contains(write.sql, c.stmt) {
				t.Fatalf("the commit held is of %q; want the one of %q", write.sql, c.stmt)
			}
			run := tr.runOf(t, job.ID)

			b.Runner.Drain(0) // SIGTERM
			stopped := make(chan struct{})
			go func() {
				defer close(stopped)
				cut, cancel := context.WithCancel(context.Background())
				cancel()
				b.Runner.Stop(cut) // a second signal: the drain ends at once
			}()
			<-run.Done() // the cut has reached the job's run
			if write.ctx.Err() != nil {
				// The write was cut too: let the commit through only once its
				// caller has its answer — the error of a commit whose outcome
				// it cannot know.
				<-write.ended
			}
			slow.release(t)
			<-stopped

			j := b.Job(t, job.ID)
			if len(j.Attempts) != 1 {
				t.Fatalf("attempts %s: want the one the run was starting", attemptsOf(j))
			}
			if a := j.Attempts[0]; a.State != store.AttemptCancelled || !store.NotSent(a) {
				t.Fatalf("the attempt is %s (%s): want it cancelled as never sent (kind not_sent), not left to its lease to become unknown",
					a.State, a.Error)
			}
			if n := b.Prov["primary"].Calls(); n != 0 {
				t.Fatalf("the primary was called %d times by a run the shutdown had cut", n)
			}
			if j.State != store.JobRunning || leaseOf(t, plain, job.ID) != "" {
				t.Fatalf("job %s held by %q: want it running, its lease released for another replica", j.State, leaseOf(t, plain, job.ID))
			}

			// Not blocked: another replica adopts the job and runs it.
			other := racetest.New(t, racetest.Options{DB: db, LeaseOwner: "replica-2",
				Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
			other.Runner.RecoverOnce(context.Background(), 10)
			if j = other.WaitSettled(t, job.ID); j.State != store.JobSucceeded {
				t.Fatalf("adopted job %s (%v), attempts %s: want it won by the other replica", j.State, derefString(j.Error), attemptsOf(j))
			}
		})
	}
}

// A run the shutdown has cut while it chose its next target creates no
// attempt: the creation's write, which a cancellation no longer cuts, is not
// begun for a run already stopped. Here the runner is stopped without a drain
// (Stop alone cuts the runs), as the failover's target is chosen.
func TestRunStoppedBeforeItsAttemptIsCreatedCreatesNone(t *testing.T) {
	tr := newStoreTrace()
	db, _ := tracedDB(t, tr)
	choosing, chosen := make(chan struct{}), make(chan struct{})
	gate := newStallGate(".(*orchestrator).failover", func() {
		close(choosing)
		<-chosen
	})
	b := racetest.New(t, racetest.Options{DB: db, Gate: gate, Route: race.Route{MaxInflight: 1},
		Providers: []racetest.Provider{
			{Name: "primary", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
			{Name: "fallback", Respond: racetest.OK(validTriage)},
		}})
	job := b.SubmitUnplanned(t)
	<-choosing
	run := tr.runOf(t, job.ID)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		cut, cancel := context.WithCancel(context.Background())
		cancel()
		b.Runner.Stop(cut)
	}()
	<-run.Done()
	close(chosen)
	<-stopped
	gate.mustHaveStalled(t)
	j := b.Job(t, job.ID)
	if len(j.Attempts) != 1 || j.Attempts[0].Provider != "primary" {
		t.Fatalf("attempts %s: want only the primary's, no failover created for a run already stopped", attemptsOf(j))
	}
	if n := b.Prov["fallback"].Calls(); n != 0 {
		t.Fatalf("the fallback was called %d times by a stopped run", n)
	}
}

// storeTrace follows the statements of a pool (a pgx tracer): for each
// backend, the one in flight on it, and for each job, the context of the
// run that took its lease (AcquireJobLease: a resumed or adopted job's
// first write).
type storeTrace struct {
	mu       sync.Mutex
	backends map[uint32]*tracedStmt
	runs     map[string]context.Context
}

// tracedStmt is a statement (or a batch of them) sent on one connection:
// ctx is its caller's context, and ended is closed once its caller has the
// answer.
type tracedStmt struct {
	sql   string
	ctx   context.Context
	ended chan struct{}
}

type stmtKey struct{}

func newStoreTrace() *storeTrace {
	return &storeTrace{backends: map[uint32]*tracedStmt{}, runs: map[string]context.Context{}}
}

func (tr *storeTrace) begin(ctx context.Context, conn *pgx.Conn, sql string) context.Context {
	s := &tracedStmt{sql: sql, ctx: ctx, ended: make(chan struct{})}
	tr.mu.Lock()
	tr.backends[conn.PgConn().PID()] = s
	tr.mu.Unlock()
	return context.WithValue(ctx, stmtKey{}, s)
}

func (tr *storeTrace) end(ctx context.Context) {
	if s, ok := ctx.Value(stmtKey{}).(*tracedStmt); ok {
		close(s.ended)
	}
}

func (tr *storeTrace) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return tr.begin(ctx, conn, data.SQL)
}

func (tr *storeTrace) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	tr.end(ctx)
}

func (tr *storeTrace) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	var sqls []string
	for _, q := range data.Batch.QueuedQueries {
		sqls = append(sqls, q.SQL)
		if strings.HasPrefix(q.SQL, "UPDATE jobs SET lease_owner = $2, lease_expires_at") && len(q.Arguments) > 0 {
			if id, ok := q.Arguments[0].(string); ok {
				tr.mu.Lock()
				if tr.runs[id] == nil {
					tr.runs[id] = ctx
				}
				tr.mu.Unlock()
			}
		}
	}
	return tr.begin(ctx, conn, strings.Join(sqls, "; "))
}

func (tr *storeTrace) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (tr *storeTrace) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	tr.end(ctx)
}

// inFlight is the statement backend pid is working on.
func (tr *storeTrace) inFlight(t *testing.T, pid uint32) *tracedStmt {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	s := tr.backends[pid]
	if s == nil {
		t.Fatalf("backend %d ran no statement of the runner's pool", pid)
	}
	return s
}

// runOf is the context of the run that took job id's lease.
func (tr *storeTrace) runOf(t *testing.T, id string) context.Context {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	ctx := tr.runs[id]
	if ctx == nil {
		t.Fatalf("no run took job %s's lease: the test did not set up its case", id)
	}
	return ctx
}

// tracedDB is a test schema whose store's pool is traced by tr, and a plain
// pool on the same schema for the test's own statements.
func tracedDB(t *testing.T, tr *storeTrace) (*testdb.DB, *pgxpool.Pool) {
	t.Helper()
	plain := testdb.New(t, store.Options{})
	cfg, err := pgxpool.ParseConfig(plain.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &testdb.DB{Pool: pool, Store: store.New(pool, store.Options{}), URL: plain.URL, Schema: plain.Schema}, plain.Pool
}

// slowCommit holds the COMMIT of each transaction that fired its trigger
// (an event on attempts, when the condition holds) until released.
type slowCommit struct {
	pool     *pgxpool.Pool
	key      int64
	holder   *pgxpool.Conn
	released bool
}

func slowCommits(t *testing.T, pool *pgxpool.Pool, event, when string) *slowCommit {
	t.Helper()
	ctx := context.Background()
	s := &slowCommit{pool: pool, key: rand.Int64N(1<<31-1) + 1}
	if _, err := pool.Exec(ctx, fmt.Sprintf(`
		CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql SET lock_timeout = 0 AS $$
		BEGIN
			LOOP
				BEGIN
					PERFORM pg_advisory_xact_lock(%d);
					RETURN NULL;
				EXCEPTION WHEN query_canceled THEN
					-- The cancel request pgx sends as it closes the
					-- connection it gave up on: the commit goes on.
				END;
			END LOOP;
		END $$;
		CREATE CONSTRAINT TRIGGER slow_commit AFTER %s ON attempts DEFERRABLE INITIALLY DEFERRED
			FOR EACH ROW WHEN (%s) EXECUTE FUNCTION slow_commit();`, s.key, event, when)); err != nil {
		t.Fatal(err)
	}
	var err error
	if s.holder, err = pool.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, s.key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.release(t)
		s.holder.Release()
	})
	return s
}

// waitBlocked waits until a backend's COMMIT waits for the lock, and
// returns that backend's pid.
func (s *slowCommit) waitBlocked(t *testing.T) uint32 {
	t.Helper()
	watchdog := time.Now().Add(time.Minute) // a failure's bound, not a condition of the test
	for {
		var pid int32
		err := s.pool.QueryRow(context.Background(), `SELECT pid FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted AND classid::bigint = 0 AND objid::bigint = $1 AND objsubid = 1
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, s.key).Scan(&pid)
		if err == nil {
			return uint32(pid)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		if time.Now().After(watchdog) {
			t.Fatal("no commit of an attempt's write ever waited: the test did not set up its case")
		}
		time.Sleep(time.Millisecond) // polls the database's state, which no event announces
	}
}

// release lets the held commit through, and those to come (the trigger
// stays, and takes a free lock: dropping it would wait for the writes of
// attempts in progress, and they behind it).
func (s *slowCommit) release(t *testing.T) {
	t.Helper()
	if s.released {
		return
	}
	s.released = true
	if _, err := s.holder.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, s.key); err != nil {
		t.Fatal(err)
	}
}

// leaseOf is who holds job id's orchestration lease ("" when no one does).
func leaseOf(t *testing.T, pool *pgxpool.Pool, id string) string {
	t.Helper()
	var owner string
	if err := pool.QueryRow(context.Background(), `SELECT coalesce(lease_owner, '') FROM jobs WHERE id = $1`, id).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	return owner
}
