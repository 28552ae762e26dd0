package store_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// errAnswerLost is what a connection whose answer was dropped reports.
var errAnswerLost = errors.New("test: connection lost before the answer arrived")

// answerDropper makes the next transaction that commits on one of its pool's
// connections lose its answer: the server commits (its ReadyForQuery, sent
// after the commit, has arrived) and the client sees the connection drop
// instead — a commit whose answer was lost.
type answerDropper struct {
	armed   atomic.Bool
	dropped chan struct{} // closed when an answer was dropped
	once    sync.Once
	// onDrop, when set (before armed), runs as the answer is dropped, before
	// dropped is closed and before the connection's reader is told of the
	// loss: what it makes so (the database gone: outageStore) holds before
	// the store can act on the loss and dial again for the claim's retry.
	// Set instead by a goroutine woken by dropped, it raced that retry,
	// held back only by CreateJob's backoff (50 ms).
	onDrop func()
}

// dropConn is a connection that, once armed, passes the server's messages
// through until the ReadyForQuery that follows a CommandComplete (the
// pipeline's commit), and drops that and the connection.
type dropConn struct {
	net.Conn
	d           *answerDropper
	watching    bool
	sawComplete bool
	broken      bool
	raw, out    []byte
}

func (c *dropConn) Read(p []byte) (int, error) {
	if !c.watching {
		if !c.d.armed.CompareAndSwap(true, false) {
			return c.Conn.Read(p)
		}
		c.watching = true
	}
	for len(c.out) == 0 {
		if c.broken {
			return 0, errAnswerLost
		}
		buf := make([]byte, 8192)
		n, err := c.Conn.Read(buf)
		c.raw = append(c.raw, buf[:n]...)
		for len(c.raw) >= 5 && !c.broken {
			l := int(binary.BigEndian.Uint32(c.raw[1:5]))
			if len(c.raw) < 1+l {
				break
			}
			msg := c.raw[:1+l]
			c.raw = c.raw[1+l:]
			switch {
			case msg[0] == 'C':
				c.sawComplete = true
			case msg[0] == 'Z' && c.sawComplete:
				c.broken = true
				c.Conn.Close()
				c.d.once.Do(func() {
					if c.d.onDrop != nil {
						c.d.onDrop()
					}
					close(c.d.dropped)
				})
				continue
			}
			c.out = append(c.out, msg...)
		}
		if err != nil && len(c.out) == 0 {
			return 0, err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// droppingStore is a store on b's database whose connections can lose the
// answer of a commit.
func droppingStore(t *testing.T, b *bundle) (*store.Store, *answerDropper) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	d := &answerDropper{dropped: make(chan struct{})}
	var dialer net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &dropConn{Conn: c, d: d}, nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return store.New(pool, store.Options{KeyRetention: time.Hour}), d
}

// A lone claim whose batch committed but whose answer was lost (the
// connection dropped after the commit) is reported created, as the database
// holds it — not failed. Reported failed, its job would be left running with
// its first attempt never sent and nobody orchestrating it until its lease
// ran out, and the caller's retry with the same key would only find it and
// wait.
func TestLoneClaimWhoseCommitAnswerWasLostIsCreated(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	st, d := droppingStore(t, b)
	nj := newJob(t, "acme", "triage", "lost-answer", `{"n":1}`)
	nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}, "replica-a", time.Minute
	d.armed.Store(true)
	job, created, err := st.CreateJob(ctx, nj)
	select {
	case <-d.dropped:
	default:
		t.Fatal("no answer was dropped: the test did not inject its failure")
	}
	if err != nil || !created {
		t.Fatalf("claim committed but its answer was lost: created=%v err=%v, want created", created, err)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'lost-answer'`); n != 1 {
		t.Fatalf("jobs = %d, want 1", n)
	}
	stored, err := b.st.GetJobAny(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if job.HeldBy != "replica-a" || job.State != store.JobRunning || len(job.Attempts) != 1 ||
		job.Attempts[0].ID != stored.Attempts[0].ID || !job.CreatedAt.Equal(stored.CreatedAt) || job.Version != stored.Version {
		t.Fatalf("job told %+v, stored %+v", job, stored)
	}
}

// Two requests for one key in one batch, the first of which the database
// refuses (its input is not JSON): the other request, another intent, is not
// failed with it — alone it would have claimed the key, and it does.
func TestClaimBesideARefusedClaimOfItsKeyIsNotFailedWithIt(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	bad := newJob(t, "acme", "triage", "shared", `{}`)
	bad.Input = []byte(`{"not json`)
	good := newJob(t, "acme", "triage", "shared", `{"n":2}`)

	leading, queued := make(chan struct{}), make(chan struct{})
	var leadOnce, queuedOnce sync.Once
	b.st.SetPathBatchHooks(func() {
		first := false
		leadOnce.Do(func() { first = true })
		if first { // hold the first batch until the second request is queued
			close(leading)
			<-queued
		}
	}, func(n int) {
		if n == 2 {
			queuedOnce.Do(func() { close(queued) })
		}
	})
	badErr := make(chan error, 1)
	go func() {
		_, _, err := b.st.CreateJob(ctx, bad)
		badErr <- err
	}()
	<-leading
	job, created, err := b.st.CreateJob(ctx, good)
	if e := <-badErr; e == nil {
		t.Fatal("the refused request was not refused")
	}
	if err != nil || !created {
		t.Fatalf("the other request for the key: created=%v err=%v, want created", created, err)
	}
	stored, err := b.st.GetJobAny(ctx, job.ID)
	if err != nil || stored.IdempotencyKey != "shared" {
		t.Fatalf("stored: %+v %v", stored, err)
	}
}

// A win whose commit answer was lost is still a win (CompleteJob reads the
// job back), and River is woken for the outbox event it may have written, as
// after any batched win that wrote one: otherwise the event would wait for
// River's next periodic fetch.
func TestWinWhoseAnswerWasLostWakesRiver(t *testing.T) {
	b := setup(t)
	acmeHasWebhook(t, b)
	st, d := droppingStore(t, b)
	_, c := runningJob(t, st, "acme", "lost-win")
	d.armed.Store(true)
	won, err := st.Complete(context.Background(), c)
	select {
	case <-d.dropped:
	default:
		t.Fatal("no answer was dropped: the test did not inject its failure")
	}
	if err != nil || !won {
		t.Fatalf("won=%v err=%v, want the committed win", won, err)
	}
	if n := st.RiverWakesAsked(); n != 1 {
		t.Fatalf("River wakes asked after a win whose answer was lost: %d, want 1", n)
	}
}
