package race_test

import (
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// refusingProxy forwards TCP to PostgreSQL; down() drops every connection and
// refuses new ones (its port closed: ECONNREFUSED, as during a PostgreSQL
// restart or fail-over), up() listens again on the same port.
type refusingProxy struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newRefusingProxy(t *testing.T, target string) *refusingProxy {
	p := &refusingProxy{t: t, target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *refusingProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close(); c.Close() }()
			go func() { io.Copy(c, s); s.Close(); c.Close() }()
		}
	}()
}

func (p *refusingProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *refusingProxy) up() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.serve(ln)
}

// outageBundle is a race engine whose store reaches PostgreSQL through a
// proxy the test can take down; the test's own reads go direct.
func outageBundle(t *testing.T, respond func(int, *providers.Request) providers.Step) (*racetest.Bundle, *refusingProxy, *testdb.DB) {
	return outageBundleWith(t, racetest.Options{}, respond)
}

// outageBundleWith is outageBundle with the bundle's options (route,
// providers); respond is used only when o names no provider.
func outageBundleWith(t *testing.T, o racetest.Options, respond func(int, *providers.Request) providers.Step) (*racetest.Bundle, *refusingProxy, *testdb.DB) {
	db := testdb.New(t, store.Options{})
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	target := net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port)))
	proxy := newRefusingProxy(t, target)
	host, port, _ := net.SplitHostPort(proxy.addr)
	cfg.ConnConfig.Host = host
	n, _ := strconv.Atoi(port)
	cfg.ConnConfig.Port = uint16(n)
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	proxied := &testdb.DB{Pool: db.Pool, Store: store.New(pool, store.Options{}), URL: db.URL, Schema: db.Schema}
	o.DB = proxied
	if len(o.Providers) == 0 {
		o.Providers = []racetest.Provider{{Name: "primary", Respond: respond}}
	}
	b := racetest.New(t, o)
	return b, proxy, db
}

// A database outage of three seconds (a PostgreSQL restart or fail-over: the
// connection refused) while a valid answer arrives. The win is tried five
// times with 50-400 ms pauses (about a second), then the attempt is
// abandoned to its lease: the job, whose only attempt returned a valid (paid)
// answer, does not succeed, and ends `unknown` once the lease expires —
// waiting for an operator or a provider lookup. The same outage does not
// lose an invalid answer's end (TestOutageKeepsAnInvalidAnswer):
// FinishAttempt tries for about five seconds.
func TestOutageDoesNotLoseAValidAnswer(t *testing.T) {
	called, answer := make(chan struct{}), make(chan struct{})
	b, proxy, db := outageBundle(t, func(call int, _ *providers.Request) providers.Step {
		if call == 1 {
			close(called)
			<-answer
		}
		return providers.Step{Output: validTriage}
	})
	job := b.Submit(t)
	<-called
	proxy.down()
	close(answer) // the valid answer arrives during the outage
	time.Sleep(3 * time.Second)
	proxy.up()
	deadline := time.Now().Add(30 * time.Second)
	for b.Runner.Runs(job.ID) {
		if time.Now().After(deadline) {
			t.Fatal("the job's run never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	j, err := db.Store.GetJobAny(context.Background(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != store.JobSucceeded {
		// What follows once the abandoned attempt's lease runs out.
		ctx := context.Background()
		if _, err := db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE job_id = $1 AND state = 'running'`, job.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Store.ExpireAttemptLeases(ctx); err != nil {
			t.Fatal(err)
		}
		after, _ := db.Store.GetJobAny(ctx, job.ID)
		t.Fatalf("after a 3 s database outage during which its only attempt's valid answer arrived, the job is %s "+
			"(attempt %s); once that attempt's lease expires it is %s (attempt %s): the valid answer was thrown away",
			j.State, j.Attempts[0].State, after.State, after.Attempts[0].State)
	}
}

// The control: the same outage while an invalid answer arrives. Its end is
// recorded once the database is back (FinishAttempt retries for ~5 s) and
// the job settles `failed`.
func TestOutageKeepsAnInvalidAnswer(t *testing.T) {
	called, answer := make(chan struct{}), make(chan struct{})
	b, proxy, db := outageBundle(t, func(call int, _ *providers.Request) providers.Step {
		if call == 1 {
			close(called)
			<-answer
		}
		return providers.Step{Output: `{"not":"a triage"}`}
	})
	job := b.Submit(t)
	<-called
	proxy.down()
	close(answer)
	time.Sleep(3 * time.Second)
	proxy.up()
	deadline := time.Now().Add(30 * time.Second)
	for b.Runner.Runs(job.ID) {
		if time.Now().After(deadline) {
			t.Fatal("the job's run never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	j, err := db.Store.GetJobAny(context.Background(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control: job %s, attempt %s", j.State, j.Attempts[0].State)
	if j.State != store.JobFailed || j.Attempts[0].State != store.AttemptInvalid {
		t.Fatalf("control: job %s, attempt %s; want failed/invalid", j.State, j.Attempts[0].State)
	}
}
