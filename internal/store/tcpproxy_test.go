package store_test

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
)

// freezableProxy is a TCP proxy in front of PostgreSQL whose connections can
// be frozen: a frozen connection forwards nothing more in either direction
// but keeps both of its sockets open, so neither end receives a FIN or an
// RST — what a network partition, a NAT or firewall that dropped an idle
// flow, or a frozen database host looks like from either end. Connections
// accepted after a freeze forward normally.
type freezableProxy struct {
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
	frozen         chan struct{} // closed by freeze
	isFrozen       bool
}

// startProxy starts a proxy to the PostgreSQL server that url names, closed
// when t ends.
func startProxy(t *testing.T, url string) *freezableProxy {
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
	p := &freezableProxy{ln: ln, network: network, target: target, closed: make(chan struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// poolConfig is url's pool configuration with every connection dialled
// through the proxy.
func (p *freezableProxy) poolConfig(t *testing.T, url string) *pgxpool.Config {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", p.ln.Addr().String())
	}
	return cfg
}

func (p *freezableProxy) accept() {
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
func (p *freezableProxy) pipe(c *proxiedConn, dst, src net.Conn) {
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

// freeze freezes every connection open now.
func (p *freezableProxy) freeze() {
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

// acceptedAfterFreeze is how many connections the proxy accepted since the
// last freeze.
func (p *freezableProxy) acceptedAfterFreeze() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.afterFreeze
}

// close closes every connection, frozen or not, and stops the proxy. It may
// be called more than once.
func (p *freezableProxy) close() {
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
