package store

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Listener fans out the NotifyChannel announcements of one dedicated database
// connection to in-process subscribers, so a waiter on any replica learns of a
// job's change made on any other. When the connection drops, every subscriber is
// woken (it re-reads the job), then the listener reconnects.
type Listener struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	mu    sync.Mutex
	subs  map[string]map[chan struct{}]struct{}
	ready chan struct{}
}

// NewListener makes a listener; Run starts it.
func NewListener(pool *pgxpool.Pool, log *slog.Logger) *Listener {
	return &Listener{pool: pool, log: log, subs: map[string]map[chan struct{}]struct{}{}, ready: make(chan struct{})}
}

// Ready is closed once the listener has issued its first LISTEN.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Subscribe returns a channel that receives a value (coalesced) whenever jobID
// changes, and a function to unsubscribe.
func (l *Listener) Subscribe(jobID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	if l.subs[jobID] == nil {
		l.subs[jobID] = map[chan struct{}]struct{}{}
	}
	l.subs[jobID][ch] = struct{}{}
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		delete(l.subs[jobID], ch)
		if len(l.subs[jobID]) == 0 {
			delete(l.subs, jobID)
		}
		l.mu.Unlock()
	}
}

func (l *Listener) wake(jobID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, set := range l.subs {
		if jobID != "" && id != jobID {
			continue
		}
		for ch := range set {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// Run listens until ctx ends.
func (l *Listener) Run(ctx context.Context) {
	var once sync.Once
	for ctx.Err() == nil {
		err := l.listenOnce(ctx, func() { once.Do(func() { close(l.ready) }) })
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("job notification listener lost its connection; reconnecting", "err", err)
		l.wake("") // waiters re-read: they may have missed a notification
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (l *Listener) listenOnce(ctx context.Context, ready func()) error {
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection carries LISTEN state: never give it back to the pool.
	pc := conn.Hijack()
	defer pc.Close(context.WithoutCancel(ctx))
	if _, err := pc.Exec(ctx, "LISTEN "+pgx.Identifier{NotifyChannel}.Sanitize()); err != nil {
		return err
	}
	ready()
	l.wake("")
	for {
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.wake(n.Payload)
	}
}
