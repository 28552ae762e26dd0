package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// A win queued behind another caller's batch is executed by a leader
// goroutine that caller starts (group.enqueue: go g.lead()), which nobody
// waits for. Store.Close did not: the server closes the pool right after
// it, and a batch that had not yet got its connection then failed — the win
// not recorded, its attempt `unknown` at lease expiry — though "once queued
// an item is always executed". Close now waits for every group's batches
// (drainGroups). The second win's batch is held just before it takes its
// connection until either Close returns (without the wait: the pool is then
// closed under it, as the server does) or Close says it waits for it.
func TestCloseWaitsForBatchUnderWay(t *testing.T) {
	defer store.SetBackgroundCloseWaits(time.Hour, time.Hour)() // no budget runs out here
	b := setup(t)
	ctx := context.Background()
	logs := newCloseLog()
	st, pool := closeStore(t, b, logs)
	first, second := runningWin(t, st, "first"), runningWin(t, st, "second")

	// The second win is offered only once the first one's batch has been
	// taken (firstBatched): offered earlier, it could join that batch, and
	// no second batch would come.
	var enqueues, batches atomic.Int32
	firstBatched, secondQueued := make(chan struct{}), make(chan struct{})
	held, closed, poolClosed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	st.SetOnQueued(func(int) {
		if enqueues.Add(1) == 2 {
			close(secondQueued)
		}
	})
	st.SetOnBatched(func(int) {
		switch batches.Add(1) {
		case 1: // the first win's batch, led by its caller, goes on once the second win is queued behind it
			close(firstBatched)
			<-secondQueued
		case 2: // the second win's, run by the leader goroutine the first caller started
			close(held)
			select {
			case <-closed: // Close did not wait: the batch goes on once the pool is closed
				<-poolClosed
			case <-logs.waiting: // Close waits for it
			}
		}
	})
	type outcome struct {
		won bool
		err error
	}
	results := make(chan outcome, 2)
	offer := func(c store.Completion) {
		won, err := st.Complete(ctx, c)
		results <- outcome{won, err}
	}
	go offer(first)
	<-firstBatched
	go offer(second)
	<-held

	go func() { st.Close(); close(closed) }()
	<-closed
	var completedBy *string
	if err := b.db.Pool.QueryRow(ctx, `SELECT completed_by FROM jobs WHERE id = $1`, second.JobID).Scan(&completedBy); err != nil {
		t.Fatal(err)
	}
	if completedBy == nil || *completedBy != second.AttemptID {
		t.Error("Store.Close returned while a win's batch, run by a leader goroutine, had not executed: " +
			"the pool closed next fails it, and its attempt becomes unknown at lease expiry")
	}
	pool.Close() // as the server does next
	close(poolClosed)
	for range 2 {
		if o := <-results; !o.won || o.err != nil {
			t.Errorf("a win offered before Close: won=%v err=%v; want it won", o.won, o.err)
		}
	}
}

// Close's wait for the batches is bounded (backgroundCloseWait, shared with
// the background writes): a batch that does not end within it is logged,
// naming its group, and left to run; Close returns. The budget is zero, so
// the test does not depend on how long anything takes.
func TestCloseLeavesBatchPastItsWait(t *testing.T) {
	defer store.SetBackgroundCloseWaits(0, time.Hour)()
	b := setup(t)
	ctx := context.Background()
	logs := newCloseLog()
	st, pool := closeStore(t, b, logs)
	c := runningWin(t, st, "held")

	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	st.SetOnBatched(func(int) { once.Do(func() { close(held); <-release }) })
	won := make(chan error, 1)
	go func() {
		ok, err := st.Complete(ctx, c)
		if err == nil && !ok {
			err = errors.New("the win lost")
		}
		won <- err
	}()
	<-held
	st.Close() // returns past its (zero) budget, the batch still held
	var warned bool
	for _, r := range logs.all() {
		if !strings.HasPrefix(r.Message, "database batches still under way at close after waiting for them") {
			continue
		}
		warned = true
		left, _ := recordAttrs(r)["left"].Any().([]string)
		if len(left) != 1 || !strings.HasPrefix(left[0], "the success path's claims and wins: 1 batch leader(s) running") {
			t.Errorf("Close's line names %q as left, want the success path's group with its one leader", left)
		}
	}
	if !warned {
		t.Error("Close did not say it left a batch under way past its wait")
	}
	close(release) // the pool is still open: the batch runs
	if err := <-won; err != nil {
		t.Fatalf("the win left running past Close's wait, its pool open: %v", err)
	}
	pool.Close()
}

// closeStore is a Store of its own on a pool of its own (the test closes
// both, as the server does), logging to logs.
func closeStore(t *testing.T, b *bundle, logs *closeLog) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return store.New(pool, store.Options{KeyRetention: time.Hour, Log: slog.New(logs)}), pool
}

// runningWin creates a job with its first attempt running and returns that
// attempt's valid answer.
func runningWin(t *testing.T, st *store.Store, key string) store.Completion {
	t.Helper()
	nj := newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Model: "m", Role: store.RolePrimary, Routing: json.RawMessage(`[]`)}, "r1"
	j, _, err := st.CreateJob(context.Background(), nj)
	if err != nil {
		t.Fatal(err)
	}
	a := j.Attempts[0]
	return store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: json.RawMessage(`{}`)}
}

// closeLog keeps a Store's log records, and closes waiting when Close says
// it waits for batches under way.
type closeLog struct {
	mu      sync.Mutex
	records []slog.Record
	waiting chan struct{}
	once    sync.Once
}

func newCloseLog() *closeLog { return &closeLog{waiting: make(chan struct{})} }

func (l *closeLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *closeLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.records = append(l.records, r.Clone())
	l.mu.Unlock()
	if strings.HasPrefix(r.Message, "waiting for the database batches under way") {
		l.once.Do(func() { close(l.waiting) })
	}
	return nil
}
func (l *closeLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *closeLog) WithGroup(string) slog.Handler      { return l }

func (l *closeLog) all() []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]slog.Record(nil), l.records...)
}
