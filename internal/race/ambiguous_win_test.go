package race_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A win whose COMMIT landed but whose answer was lost, with the database
// unreachable for as long as the store tried to learn what happened
// (store.OfferCompletion then fails): the job is succeeded, completed by the
// attempt, and nobody else counts it (recovery finds it succeeded). When the
// database answers again the attempt reads its job back and reports the win
// as this run's: the job's settlement is counted once, and the attempt's end
// as stored (won).
func TestLostWinAnswerIsCountedAsTheRunsWin(t *testing.T) {
	db := testdb.New(t, store.Options{})
	g := &lostWinGate{}
	g.armed.Store(true) // the test's only win is the one cut
	st := store.New(g.pool(t, db.URL), store.Options{})
	cut := *db
	cut.Store = st // the listener keeps db's own pool: only the runner's store is cut
	obs := &winEndings{settled: map[string]int{}}
	log := slog.New(liftOn{slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}), g})
	b := racetest.New(t, racetest.Options{DB: &cut, Observer: obs, Log: log,
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})

	job := b.Submit(t)
	b.Stop() // the job's run has ended

	if !g.cut.Load() {
		t.Fatal("precondition: the win's answer was never cut")
	}
	j, err := db.Store.GetJobAny(context.Background(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != store.JobSucceeded || j.CompletedBy == nil || len(j.Attempts) != 1 || *j.CompletedBy != j.Attempts[0].ID {
		t.Fatalf("precondition: job %s completed by %v, attempts %d: want succeeded by its only attempt (the win committed)",
			j.State, j.CompletedBy, len(j.Attempts))
	}
	if a := j.Attempts[0]; a.State != store.AttemptWon {
		t.Fatalf("precondition: attempt stored %s, want won", a.State)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.settled[store.JobSucceeded] != 1 || len(obs.settled) != 1 {
		t.Fatalf("settlements counted %v, want succeeded exactly once", obs.settled)
	}
	if len(obs.finished) != 1 || obs.finished[0] != store.AttemptWon {
		t.Fatalf("attempt endings reported %v, want [won] as stored", obs.finished)
	}
}

// winEndings counts the settlements and the attempts' reported ends.
type winEndings struct {
	nop
	mu       sync.Mutex
	settled  map[string]int
	finished []string
}

func (e *winEndings) JobSettled(state string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.settled[state]++
}

func (e *winEndings) AttemptFinished(_, _, state string, _ providers.Kind, _ time.Duration, _ providers.Usage) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.finished = append(e.finished, state)
}

// lostWinGate cuts the database off the runner's store the moment a win's
// transaction has ended (its answer, up to ReadyForQuery, was read off the
// wire and dropped: the COMMIT landed, its caller hears nothing of it), and
// keeps it unreachable — every dial and every call refused at once — until
// the attempt logs that it could not record its completion (liftOn).
type lostWinGate struct {
	armed atomic.Bool // the next win statement prepared is the one cut
	down  atomic.Bool // the database is unreachable
	cut   atomic.Bool // the win's answer was cut
}

var errUnreachable = errors.New("test: the database is unreachable")

// winMarker is a piece of the win statement's text (store's winSQL), sent
// when a connection prepares it.
var winMarker = []byte("completed_by = w.attempt_id")

// pool is a pool on url whose connections pass through g.
func (g *lostWinGate) pool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if g.down.Load() {
			return nil, errUnreachable
		}
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &gateConn{Conn: c, g: g}, nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// gateConn is one connection through the gate. The win's statement is
// prepared in one round trip (its text sent: winPrepared), executed in the
// next (winSent), whose answer is then read and dropped.
type gateConn struct {
	net.Conn
	g     *lostWinGate
	mu    sync.Mutex
	state int
	resp  []byte // the win's answer so far
}

const (
	winPrepared = 1 + iota
	winSent
)

func (c *gateConn) Write(b []byte) (int, error) {
	if c.g.down.Load() {
		return 0, errUnreachable
	}
	c.mu.Lock()
	switch {
	case c.state == 0 && bytes.Contains(b, winMarker) && c.g.armed.CompareAndSwap(true, false):
		c.state = winPrepared
	case c.state == winPrepared:
		c.state = winSent
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *gateConn) Read(p []byte) (int, error) {
	if c.g.down.Load() {
		return 0, errUnreachable
	}
	c.mu.Lock()
	sent := c.state == winSent
	c.mu.Unlock()
	if !sent {
		return c.Conn.Read(p)
	}
	for {
		n, err := c.Conn.Read(p)
		c.resp = append(c.resp, p[:n]...)
		if readyForQuery(c.resp) {
			// The win's transaction has ended: the database goes away with
			// its answer.
			c.g.down.Store(true)
			c.g.cut.Store(true)
			return 0, errUnreachable
		}
		if err != nil {
			return 0, err
		}
	}
}

// readyForQuery says whether b, a server's messages, holds a ReadyForQuery.
func readyForQuery(b []byte) bool {
	for len(b) >= 5 {
		n := 1 + int(binary.BigEndian.Uint32(b[1:5]))
		if len(b) < n {
			return false
		}
		if b[0] == 'Z' {
			return true
		}
		b = b[n:]
	}
	return false
}

// liftOn brings the database back when the attempt logs that it could not
// record its completion: after store.OfferCompletion failed.
type liftOn struct {
	slog.Handler
	g *lostWinGate
}

func (h liftOn) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "could not record completion") {
		h.g.down.Store(false)
	}
	return h.Handler.Handle(ctx, r)
}

func (h liftOn) WithAttrs(as []slog.Attr) slog.Handler { return liftOn{h.Handler.WithAttrs(as), h.g} }
func (h liftOn) WithGroup(n string) slog.Handler       { return liftOn{h.Handler.WithGroup(n), h.g} }
