package testdb

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// FreezableProxy is a TCP proxy in front of PostgreSQL whose connections can
// be frozen: a frozen connection forwards nothing more in either direction
// but keeps both of its sockets open, so neither end receives a FIN or an
// RST — what a network partition, a NAT or firewall that dropped an idle
// flow, a failover whose old primary vanished, or a frozen database host
// looks like from either end: a call sent on it meets no refusal and no
// answer. Connections accepted after a freeze forward normally.
type FreezableProxy struct {
	ln              net.Listener
	network, target string // PostgreSQL's address
	closed          chan struct{}
	closing         sync.Once
	wg              sync.WaitGroup

	mu          sync.Mutex
	conns       []*proxiedConn
	afterFreeze int // connections accepted since the last freeze
}

type proxiedConn struct {
	client, server net.Conn
	frozen         chan struct{} // closed by Freeze
	isFrozen       bool
}

// StartProxy starts a proxy to the PostgreSQL server that url names (a
// DB's URL), closed when t ends.
func StartProxy(t testing.TB, url string) *FreezableProxy {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	host, port := cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))
	network, target := "tcp", net.JoinHostPort(host, port)
	if strings.HasPrefix(host, "/") { // a Unix socket directory, as pgconn reads it
		network, target = "unix", filepath.Join(host, ".s.PGSQL."+port)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &FreezableProxy{ln: ln, network: network, target: target, closed: make(chan struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(p.Close)
	return p
}

// Pool opens a pool on url (a DB's URL: its schema) configured as the store
// configures its own (store.ConfigurePool), with every connection dialled
// through p. It opens no connection yet. When t ends p closes first, then
// the pool: pgx drains a connection it gave up on until the server closes it
// (for up to 15 s), and a frozen one never does. tune, if given, adjusts
// the configuration after store.ConfigurePool (for example ShouldPing).
func (p *FreezableProxy) Pool(t testing.TB, url string, tune ...func(*pgxpool.Config)) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	for _, f := range tune {
		f(cfg)
	}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", p.ln.Addr().String())
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	t.Cleanup(p.Close) // runs before pool.Close
	return pool
}

func (p *FreezableProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		var d net.Dialer
		server, err := d.Dial(p.network, p.target)
		if err != nil {
			client.Close()
			continue
		}
		c := &proxiedConn{client: client, server: server, frozen: make(chan struct{})}
		p.mu.Lock()
		select {
		case <-p.closed:
			p.mu.Unlock()
			client.Close()
			server.Close()
			return
		default:
		}
		p.conns = append(p.conns, c)
		p.afterFreeze++
		p.wg.Go(func() { p.pipe(c, server, client) })
		p.wg.Go(func() { p.pipe(c, client, server) })
		p.mu.Unlock()
	}
}

// pipe copies src to dst until either end closes — then closes both, as a
// network passes a close on — or until c is frozen: then it forwards nothing
// and closes nothing until the proxy closes.
func (p *FreezableProxy) pipe(c *proxiedConn, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-c.frozen:
			<-p.closed
			return
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				err = errors.Join(err, werr)
			}
		}
		if err != nil {
			c.client.Close()
			c.server.Close()
			return
		}
	}
}

// Freeze freezes every connection open now.
func (p *FreezableProxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if !c.isFrozen {
			c.isFrozen = true
			close(c.frozen)
		}
	}
	p.afterFreeze = 0
}

// AcceptedAfterFreeze is how many connections the proxy accepted since the
// last freeze (since it started, before any).
func (p *FreezableProxy) AcceptedAfterFreeze() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.afterFreeze
}

// Close closes every connection, frozen or not, and stops the proxy: from
// then on a connection to it is refused. It may be called more than once.
func (p *FreezableProxy) Close() {
	p.closing.Do(func() {
		p.mu.Lock()
		close(p.closed)
		p.ln.Close()
		for _, c := range p.conns {
			c.client.Close()
			c.server.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
}
