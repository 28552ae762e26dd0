package store

import (
	"context"
	"sync"
	"time"
)

// group coalesces concurrent requests of one kind (key claims, wins) into
// batches, each executed as one statement in one transaction: one round trip
// and one WAL flush for many jobs (group commit, in the manner of River's
// batched completer and PostgreSQL's own commit_delay, without the delay).
//
// There is no timer and no long-lived goroutine: a request that finds no batch
// running starts a leader goroutine that takes everything queued (up to size)
// and executes it; requests arriving meanwhile queue up and go out together as
// soon as that batch returns. Another leader starts only when a full batch is
// waiting (up to maxLeaders batches in flight, whose WAL flushes PostgreSQL
// itself groups), so a lone caller never waits for company. Leaders exit as
// soon as the queue is empty.
type group[T any] struct {
	size       int // most items per batch
	maxLeaders int // most batches in flight at once
	// exec runs one batch and must call done on every item.
	exec func(ctx context.Context, batch []*T)

	mu      sync.Mutex
	queue   []*T
	leaders int
}

// execTimeout bounds one batch; it runs on a context of its own because its
// items belong to many callers, none of whose cancellations may cut the others.
const execTimeout = 30 * time.Second

// enqueue adds it to the next batch. The caller then waits for it to be done;
// once queued an item is always executed.
func (g *group[T]) enqueue(it *T) {
	g.mu.Lock()
	g.queue = append(g.queue, it)
	start := g.leaders == 0 || (len(g.queue) >= g.size && g.leaders < g.maxLeaders)
	if start {
		g.leaders++
	}
	g.mu.Unlock()
	if start {
		go g.lead()
	}
}

func (g *group[T]) lead() {
	for {
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.leaders--
			g.mu.Unlock()
			return
		}
		n := min(len(g.queue), g.size)
		batch := make([]*T, n)
		copy(batch, g.queue)
		g.queue = append(g.queue[:0], g.queue[n:]...)
		g.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), execTimeout)
		g.exec(ctx, batch)
		cancel()
	}
}
