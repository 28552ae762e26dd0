package store

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Listener fans out job changes to in-process subscribers, found by job id. A
// change made by this process is published in memory (Publish) the moment it
// commits; the NotifyChannel announcements of one dedicated database connection
// carry changes made by other replicas. When the connection drops, every
// subscriber is woken (it re-reads the job), then the listener reconnects.
//
// A subscriber receives the job's new state when the announcement carries it,
// and "" when it must read the job to know.
type Listener struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	mu    sync.Mutex
	subs  map[string]map[chan string]struct{}
	ready chan struct{}
}

// NewListener makes a listener; Run starts it.
func NewListener(pool *pgxpool.Pool, log *slog.Logger) *Listener {
	return &Listener{pool: pool, log: log, subs: map[string]map[chan string]struct{}{}, ready: make(chan struct{})}
}

// Ready is closed once the listener has issued its first LISTEN.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Subscribe returns a channel that receives the job's state (or "", see
// Listener) whenever jobID changes, and a function to unsubscribe. Values are
// coalesced: a subscriber that is behind sees the latest one.
func (l *Listener) Subscribe(jobID string) (<-chan string, func()) {
	ch := make(chan string, 1)
	l.mu.Lock()
	if l.subs[jobID] == nil {
		l.subs[jobID] = map[chan string]struct{}{}
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

// Publish tells this process's subscribers that jobID changed to state (""
// when not known). It is how a change committed here reaches a waiter here
// without a database round trip; other replicas learn of it by NOTIFY.
func (l *Listener) Publish(jobID, state string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.subs[jobID] {
		send(ch, state)
	}
}

// wakeAll wakes every subscriber without a state: they may have missed a
// change.
func (l *Listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, set := range l.subs {
		for ch := range set {
			send(ch, "")
		}
	}
}

// send delivers v, replacing an unread older value.
func send(ch chan string, v string) {
	for {
		select {
		case ch <- v:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}

// parsePayload splits a NotifyChannel payload, "<job id>" or "<job id>:<state>".
func parsePayload(p string) (jobID, state string) {
	id, st, _ := strings.Cut(p, ":")
	return id, st
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
		l.wakeAll() // waiters re-read: they may have missed a notification
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
	l.wakeAll()
	for {
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.Publish(parsePayload(n.Payload))
	}
}
