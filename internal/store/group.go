package store

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/routerhq/router/internal/gostack"
)

// group coalesces concurrent requests (the success path's key claims and
// wins: pathCommit) into batches, each executed in one round trip and one
// transaction: one WAL flush for many jobs (group commit, in the manner of River's
// batched completer and PostgreSQL's own commit_delay, without the delay).
//
// There is no timer and no long-lived goroutine: a request that finds no batch
// running leads itself — its own goroutine takes everything queued (up to
// size) and executes it, so a lone caller pays no hand-off to another
// goroutine; requests arriving meanwhile queue up and go out together as soon
// as that batch returns, under a leader goroutine the caller starts when its
// own batch is done. Another leader starts only when a full batch is waiting
// (up to maxLeaders batches in flight, whose WAL flushes PostgreSQL itself
// groups), so a lone caller never waits for company. Leaders exit as soon as
// the queue is empty.
//
// Store.Close waits for every group to have no leader (drainGroups): a
// leader goroutine is nobody's call, and a batch of it that had not got its
// connection when the caller closed the pool would fail, a win in it lost.
// Items may still be queued while Close waits, and after: they are never
// refused nor dropped; those queued before the wait ends are waited for too,
// a later one's batch runs on whatever is left of the pool (if closed, it
// fails and its callers are told).
type group[T any] struct {
	// name names the group in Close's log ("the success path's claims and
	// wins").
	name       string
	size       int // most items per batch
	maxLeaders int // most batches in flight at once
	// weight, when set, is an item's size in bytes; a batch then also stops
	// before its items' weights pass maxWeight (it always takes one item),
	// so a burst of large items is not one statement of them all.
	weight    func(*T) int
	maxWeight int
	// exec runs one batch and must call done on every item.
	exec func(ctx context.Context, batch []*T)

	mu      sync.Mutex
	queue   []*T
	leaders int
	// idle, made by a waiter (Close: idleChan) while the group has a
	// leader, is closed when the last leader leaves.
	idle chan struct{}

	// held is the success path's idempotency keys recently found held past
	// a claim's lock waits, whose claims go alone, not through the batches
	// (CreateJob); unused by the other groups.
	held heldKeys
	// heldOwners is the owners whose max_live_jobs lock a claim recently
	// found held past its waits (ErrLiveLimitBusy, claimAlone), whose
	// claims that take that lock go alone (CreateJob); keyed by owner, with
	// heldKeys's memory and bound.
	heldOwners heldKeys

	// beforeEnqueue, in tests, runs as a caller comes to enqueue, before it
	// is queued (and so before it may become the leader).
	beforeEnqueue func()
	// beforeSelfBatch, in tests, runs when a caller has become the leader and
	// before it takes its batch.
	beforeSelfBatch func()
	// onQueued, in tests, is told the queue's length after each enqueue.
	onQueued func(n int)
	// onAlone, in tests, runs as a caller starts running alone an item of
	// its own that a batch found blocked on a held row (claimAlone,
	// winAlone, writeDelivery), before its statement is sent.
	onAlone func()
}

// execTimeout bounds one batch; it runs on a context of its own because its
// items belong to many callers, none of whose cancellations may cut the others.
const execTimeout = 30 * time.Second

// enqueue adds it to the next batch. The caller then waits for it to be done;
// once queued an item is always executed. A caller that finds no leader
// executes the batch (its own item first) before enqueue returns.
func (g *group[T]) enqueue(it *T) {
	if g.beforeEnqueue != nil {
		g.beforeEnqueue()
	}
	g.mu.Lock()
	g.queue = append(g.queue, it)
	queued := len(g.queue)
	self := g.leaders == 0
	start := !self && g.fullBatchWaits() && g.leaders < g.maxLeaders
	if self || start {
		g.leaders++
	}
	g.mu.Unlock()
	if g.onQueued != nil {
		g.onQueued(queued)
	}
	switch {
	case self:
		// With no leader the queue held nothing else, but until this caller
		// takes its batch others may queue: a full batch of them starts a
		// leader goroutine, which may take this item too. Then next finds
		// the queue empty, and its leaving is this caller's.
		if g.beforeSelfBatch != nil {
			g.beforeSelfBatch()
		}
		if !g.next() {
			return
		}
		g.mu.Lock()
		rest := len(g.queue) > 0
		if !rest {
			g.leave()
		}
		g.mu.Unlock()
		if rest {
			go g.lead() // others queued meanwhile: a goroutine takes over
		}
	case start:
		go g.lead()
	}
}

// await enqueues it and waits until done is closed (its batch has run) or
// ctx ends; a caller that stops waiting does not know whether its item was
// carried out (as with a statement cancelled during its commit): its batch
// executes it either way.
func (g *group[T]) await(ctx context.Context, it *T, done <-chan struct{}) error {
	g.enqueue(it)
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// take is how many of the queue's first items the next batch carries: up to
// size, and (with weight) no more than fit in maxWeight, but at least one.
// Called with mu held.
func (g *group[T]) take() int {
	n := min(len(g.queue), g.size)
	if g.weight == nil {
		return n
	}
	sum := 0
	for i, it := range g.queue[:n] {
		if sum += g.weight(it); sum > g.maxWeight && i > 0 {
			return i
		}
	}
	return n
}

// fullBatchWaits reports whether the queue holds more than its next batch
// carries: size items, or (with weight) items past maxWeight — then another
// leader may start, as for a full batch by count. Called with mu held.
func (g *group[T]) fullBatchWaits() bool {
	return len(g.queue) >= g.size || g.weight != nil && g.take() < len(g.queue)
}

func (g *group[T]) lead() {
	gostack.Reserve() // a batch goes through pgx on a new goroutine
	for g.next() {
	}
}

// next executes the next batch, if any, and reports whether the leader should
// go on; a leader that finds the queue empty leaves.
func (g *group[T]) next() bool {
	g.mu.Lock()
	if len(g.queue) == 0 {
		g.leave()
		g.mu.Unlock()
		return false
	}
	n := g.take()
	batch := make([]*T, n)
	copy(batch, g.queue)
	g.queue = append(g.queue[:0], g.queue[n:]...)
	g.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), execTimeout)
	defer cancel()
	defer func() {
		// A panic in exec leaves its batch's callers waiting and this
		// leadership counted: crash loudly, as a leader goroutine's panic
		// always did, rather than let a caller's recovery (an HTTP handler's)
		// hide it and every later batch wait for a leader that left.
		if p := recover(); p != nil {
			go panic(p)
			select {}
		}
	}()
	g.exec(ctx, batch)
	return true
}

// leave ends a leadership, the queue being empty; the last leader to leave
// wakes Close's wait (idle). Called with mu held.
func (g *group[T]) leave() {
	g.leaders--
	if g.leaders == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

// idleChan returns a channel closed once g has no leader (and so nothing
// queued: an item is queued only beside a leader, who takes it); one closed
// already when that is so now.
func (g *group[T]) idleChan() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.leaders == 0 {
		return closedChan
	}
	if g.idle == nil {
		g.idle = make(chan struct{})
	}
	return g.idle
}

// busy says what g has under way, for Close's log: "" when it has no leader.
func (g *group[T]) busy() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.leaders == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %d batch leader(s) running, %d item(s) queued behind them", g.name, g.leaders, len(g.queue))
}

// closedChan is a closed channel: what idleChan returns for an idle group.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// drainable is what Close sees of a group (drainGroups).
type drainable interface {
	idleChan() <-chan struct{}
	busy() string
}

// drainGroups waits, until deadline, for the groups' batches: until every
// group has no leader, seen after waiting for each in turn (an item queued
// meanwhile, a caller's that came after Close began, is waited for in the
// next round). wait is the whole budget, which deadline ends, for the log.
// Past deadline it logs the groups still busy and returns: their
// batches run on (each within execTimeout), and those that do not get their
// connection before the caller closes the pool fail, their callers told.
func drainGroups(deadline time.Time, wait time.Duration, log *slog.Logger, groups ...drainable) {
	left := busyGroups(groups)
	if left == nil {
		return
	}
	log.Info("waiting for the database batches under way before closing the store", "busy", left)
	for left != nil {
		for _, g := range groups {
			if !awaitClosed(g.idleChan(), time.Until(deadline)) {
				log.Warn("database batches still under way at close after waiting for them: closing without them "+
					"(one that has not got its connection when the pool is closed fails; a win in it is not recorded, "+
					"and recovery settles its attempt when its lease expires)",
					"waited", wait, "left", busyGroups(groups))
				return
			}
		}
		left = busyGroups(groups)
	}
}

// busyGroups names what the groups still busy have under way; nil for none.
func busyGroups(groups []drainable) []string {
	var left []string
	for _, g := range groups {
		if b := g.busy(); b != "" {
			left = append(left, b)
		}
	}
	return left
}
