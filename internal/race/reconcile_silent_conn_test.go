package race_test

import (
	"context"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// silenceSwitch makes database connections go silent: while on, a connection
// that writes becomes dead — what it writes is swallowed and it never answers
// again — as a connection whose peer vanished without a reset (a NAT or
// firewall dropping the flow, a frozen database host or proxy) looks to the
// client until TCP gives up, minutes later.
type silenceSwitch struct {
	on     atomic.Bool
	killed chan struct{}
}

type silentConn struct {
	net.Conn
	sw   *silenceSwitch
	dead atomic.Bool
	once sync.Once
	wake chan struct{} // closed when the client gives up on the connection (deadline, close)
}

func (c *silentConn) Write(p []byte) (int, error) {
	if c.sw.on.Load() && c.dead.CompareAndSwap(false, true) {
		select {
		case c.sw.killed <- struct{}{}:
		default:
		}
	}
	if c.dead.Load() {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *silentConn) Read(p []byte) (int, error) {
	if c.dead.Load() {
		<-c.wake
		return 0, os.ErrDeadlineExceeded
	}
	return c.Conn.Read(p)
}

func (c *silentConn) interrupt() { c.once.Do(func() { close(c.wake) }) }

func (c *silentConn) SetDeadline(t time.Time) error {
	if !t.IsZero() && !t.After(time.Now()) {
		c.interrupt()
	}
	return c.Conn.SetDeadline(t)
}

func (c *silentConn) SetReadDeadline(t time.Time) error {
	if !t.IsZero() && !t.After(time.Now()) {
		c.interrupt()
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *silentConn) Close() error {
	c.interrupt()
	return c.Conn.Close()
}

// gatedLooker is a scripted provider whose lookup of one attempt waits until
// the test lets it answer.
type gatedLooker struct {
	*providers.Scripted
	gated   atomic.Value // attempt id
	looking chan struct{}
	release chan struct{}
}

func (g *gatedLooker) Lookup(ctx context.Context, attemptID string) (*providers.Response, bool, error) {
	if id, _ := g.gated.Load().(string); id == attemptID {
		g.looking <- struct{}{}
		<-g.release
	}
	return g.Scripted.Lookup(ctx, attemptID)
}

// Every step of a recovery pass is bounded (passTimeout, a minute) so that "a
// step stuck on something unforeseen (a connection that stopped answering)
// ends, and the next tick starts afresh, instead of stopping recovery for good
// while the elector keeps renewing this replica's leadership" (recovery.go).
// The reconciler's lookups are part of recovery, but their database work —
// storedAttempt's read, reconciledBilled's, and ResolveAttempt — runs on
// RunRecovery's context with no deadline (ResolveAttempt's LockWait bounds
// only lock waits). A resolution whose connection goes silent holds its
// reconciler slot until TCP gives up (or for ever behind a proxy that keeps
// the connection open): with every slot held so (Reconcilers, 8 by default;
// one here), the leader reconciles no unknown attempt again, while it keeps
// leading and its scans run on. Each of those calls is now bounded
// (reconcileStoreTimeout, ten seconds; one second here, so the test need not
// wait the production bound): the silent resolution ends, its attempt is left
// for a later pass, and the slot serves the other attempt.
func TestReconcilerSlotIsNotHeldForEverBySilentConnection(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	sw := &silenceSwitch{killed: make(chan struct{}, 1)}
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &silentConn{Conn: c, sw: sw, wake: make(chan struct{})}, nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool, store.Options{})

	primary := &gatedLooker{Scripted: providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "primary-model",
		Respond: racetest.Hang}), looking: make(chan struct{}, 1), release: make(chan struct{})}
	b := racetest.New(t, racetest.Options{Route: race.Route{}, DB: &testdb.DB{Pool: pool, Store: st, URL: db.URL, Schema: db.Schema},
		Providers: []racetest.Provider{{Name: "primary", Adapter: primary, Timeout: 30 * time.Millisecond}}})
	first := b.WaitSettled(t, b.Submit(t).ID)
	second := b.WaitSettled(t, b.Submit(t).ID)
	if first.State != store.JobUnknown || second.State != store.JobUnknown {
		t.Fatalf("jobs %s and %s, want both unknown (their primary timed out)", first.State, second.State)
	}
	primary.gated.Store(first.Attempts[0].ID)

	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Runner.RunRecovery(rctx, race.WithReconcileStoreTimeout(race.RecoveryConfig{Reconcilers: 1, Interval: 200 * time.Millisecond}, time.Second))
	}()
	t.Cleanup(func() { cancel(); <-done })

	// The oldest attempt's lookup is under way; its resolution's connection
	// goes silent.
	select {
	case <-primary.looking:
	case <-time.After(30 * time.Second):
		t.Fatal("the first attempt was never looked up")
	}
	sw.on.Store(true)
	close(primary.release)
	select {
	case <-sw.killed:
	case <-time.After(30 * time.Second):
		t.Fatal("the resolution never wrote to the database")
	}
	sw.on.Store(false) // every other connection, and every new one, answers again

	// Far longer than the bound the test sets (a second); without a bound
	// the slot is held until the test ends.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		j, err := st.GetJobAny(ctx, second.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Attempts[0].State != store.AttemptUnknown {
			return // reconciled
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("30 s after one resolution's connection went silent, the other unknown attempt (job %s) has still not been looked up: "+
		"the silent resolution holds the reconciler's slot with no deadline, and the leader reconciles nothing more", second.ID)
}
