package store

import (
	"context"
	"sync"
	"time"
)

// riverWakeSQL is River's insert notification for the webhooks queue, as the
// outbox trigger sends it (migration 0006), in a transaction of its own whose
// commit does not wait for a WAL flush: losing it in a crash costs only
// promptness, since River's periodic fetch finds the job.
const riverWakeSQL = `SELECT set_config('synchronous_commit', 'off', true),
	pg_notify(coalesce(current_schema(), '') || '.river_insert', '{"queue": "webhooks"}')`

// outboxWake sends River's insert notification after batched wins that wrote
// outbox events (migration 0013): their transactions do not notify, so that
// concurrent batches do not commit one at a time behind the notification
// queue's database-wide lock. One notification is in flight at a time;
// requests arriving meanwhile are answered by one more after it: a woken
// producer fetches as many due jobs as it has free workers, and fetches again
// as workers free up while its last fetch came back full, so one wake serves
// every event committed before it.
type outboxWake struct {
	mu      sync.Mutex
	running bool  // a goroutine is sending
	again   bool  // a batch committed events after the running send began
	asked   int64 // wakes asked for since the store was made
	// beforeSend, in tests, runs before each notification is sent.
	beforeSend func()
}

// wakeDeliveries asks for River's notification without waiting for it.
func (s *Store) wakeDeliveries() {
	w := &s.wake
	w.mu.Lock()
	w.asked++
	if w.running {
		w.again = true
		w.mu.Unlock()
		return
	}
	w.running = true
	w.mu.Unlock()
	// In the background, which Close waits for; once Close has begun,
	// nothing is sent (River's periodic fetch, another replica's, finds the
	// job), and the next wake asked for finds none running.
	started := s.bg.start("wake of webhook deliveries (River's notification)", func(bctx context.Context) {
		for {
			if w.beforeSend != nil {
				w.beforeSend()
			}
			ctx, cancel := context.WithTimeout(bctx, 10*time.Second)
			// An error leaves the job to River's periodic fetch.
			_, _ = s.pool.Exec(ctx, riverWakeSQL)
			cancel()
			w.mu.Lock()
			if !w.again {
				w.running = false
				w.mu.Unlock()
				return
			}
			w.again = false
			w.mu.Unlock()
		}
	})
	if !started {
		w.mu.Lock()
		w.running, w.again = false, false
		w.mu.Unlock()
	}
}

// announceWins wakes River when any win of a committed round wrote an
// outbox event (its owner has a webhook).
func (s *Store) announceWins(ws []*winRequest) {
	for _, w := range ws {
		if w.announced {
			s.wakeDeliveries()
			return
		}
	}
}
