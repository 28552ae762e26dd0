package store_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// heldConn records whether the database sent anything on a probe's own
// connection, and closes closed when it is closed.
type heldConn struct {
	net.Conn
	read   atomic.Int64
	once   sync.Once
	closed chan struct{}
}

func (c *heldConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read.Add(int64(n))
	return n, err
}

func (c *heldConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// A caller of Ping waiting for the probe connection (its own, or one another
// caller opened) gives up with its ctx, at once; the connection is not
// abandoned with its first caller: it is still answered, for the callers
// that wait for it.
func TestPingWaitersLeaveWithTheirContext(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MinConns, cfg.MaxConns = 1, 1
	var probing atomic.Bool
	dialed := make(chan *heldConn, 1)
	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	d := &net.Dialer{}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil || !probing.Load() {
			return c, err
		}
		h := &heldConn{Conn: c, closed: make(chan struct{})}
		dialed <- h
		<-release // held whatever ctx says: its callers must not wait for it
		return h, nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool, store.Options{})
	conn, err := pool.Acquire(context.Background()) // the pool is busy
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	probing.Store(true)

	first, leaveFirst := context.WithCancel(context.Background())
	firstDone := testdb.RunAsync(t, leaveFirst, func() error { return st.Ping(first) })
	h := <-dialed // the first caller's probe connection, held
	second, leaveSecond := context.WithCancel(context.Background())
	secondDone := testdb.RunAsync(t, leaveSecond, func() error { return st.Ping(second) })
	leaveSecond()
	if err := <-secondDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("a caller waiting for another's probe connection left: Ping = %v, want context.Canceled", err)
	}
	leaveFirst()
	if err := <-firstDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller whose probe connection is held left: Ping = %v, want context.Canceled", err)
	}
	releaseOnce.Do(func() { close(release) })
	<-h.closed
	if h.read.Load() == 0 {
		t.Fatal("the probe connection was abandoned when its first caller left: the database was never heard on it")
	}
	probing.Store(false)
	if err := st.Ping(context.Background()); err != nil {
		t.Fatalf("after: Ping = %v", err)
	}
}

// A database that refuses the probe's connection for being at its
// connection limit answered, but a pool holding no connection of its own
// cannot work there: Ping fails (the busy pool's case is in
// internal/api's TestReadyzBusyPoolAtConnectionLimit).
func TestPingAtConnectionLimitWithoutPoolConnectionsFails(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	cfg := db.LimitedRole(t, 1)
	other, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy()) // another process takes the role's one connection
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close(context.Background()) })
	cfg.MinConns = 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := store.New(pool, store.Options{}).Ping(ctx); err == nil {
		t.Fatal("database at its connection limit, pool without a connection: Ping = nil, want an error")
	}
}
