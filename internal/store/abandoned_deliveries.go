package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AbandonedEvent is an event the delivery worker gave up on, and when.
type AbandonedEvent struct {
	*Event
	// AbandonedAt is when its status became abandoned, on the database
	// clock (job_events.abandoned_at, set by a trigger: migration 0030).
	AbandonedAt time.Time
}

// AbandonedDeliveries is what the dashboard shows of the events abandoned
// recently: answered 410 Gone, or a try failed when the event was
// webhooks.retry_for old. Either is never sent again.
type AbandonedDeliveries struct {
	Count  int               // abandoned within the window
	Events []*AbandonedEvent // the newest of them, newest first (at most the limit)
}

// Both reads walk the partial index job_events_abandoned (abandoned_at)
// WHERE status = 'abandoned' over the window only, on the database clock:
// the count from the index alone, the list its first limit entries.
const (
	abandonedCountSQL = `SELECT count(*) FROM job_events e
	WHERE e.status = 'abandoned' AND e.abandoned_at > now() - $1::interval`
	abandonedListSQL = `SELECT ` + eventColumns + `, e.abandoned_at FROM job_events e
	WHERE e.status = 'abandoned' AND e.abandoned_at > now() - $1::interval
	ORDER BY e.abandoned_at DESC, e.id DESC LIMIT $2`
)

// RecentlyAbandonedEvents counts the events abandoned within the last
// `within` and lists the newest `limit` of them, newest first, in one round
// trip.
func (s *Store) RecentlyAbandonedEvents(ctx context.Context, within time.Duration, limit int) (AbandonedDeliveries, error) {
	var ab AbandonedDeliveries
	b := &pgx.Batch{}
	b.Queue(abandonedCountSQL, within)
	b.Queue(abandonedListSQL, within, limit)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if err := br.QueryRow().Scan(&ab.Count); err != nil {
		return ab, fmt.Errorf("count abandoned deliveries: %w", err)
	}
	rows, err := br.Query()
	if err != nil {
		return ab, fmt.Errorf("list abandoned deliveries: %w", err)
	}
	ab.Events, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*AbandonedEvent, error) {
		var a AbandonedEvent
		e, err := scanEvent(r, &a.AbandonedAt)
		a.Event = e
		return &a, err
	})
	if err != nil {
		return ab, fmt.Errorf("list abandoned deliveries: %w", err)
	}
	if err := br.Close(); err != nil {
		return ab, fmt.Errorf("list abandoned deliveries: %w", err)
	}
	return ab, nil
}
