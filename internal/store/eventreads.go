package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// eventRead is a webhook delivery's read of its event (EventForDelivery)
// waiting for its batch: concurrent deliveries' reads go out together, four
// statements for the whole batch (event and webhook, then the job, attempts
// and race events of the events not yet frozen) where each delivery ran four
// of its own.
type eventRead struct {
	id   string
	done chan struct{}
	ev   *Event
	wh   *Webhook
	job  *Job
	err  error
}

// eventReadBatchSize is the most reads carried by one batch.
const eventReadBatchSize = 64

const (
	eventsForDeliverySQL = `SELECT ` + eventColumns + `, e.body, w.url, w.secret
	FROM job_events e LEFT JOIN webhook_owners w ON w.owner = e.owner WHERE e.id = ANY($1::uuid[])`
	jobsOfUnfrozenEventsSQL = `SELECT e.id::text, ` + jobColumns + `
	FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE e.id = ANY($1::uuid[]) AND e.body IS NULL`
	attemptsOfUnfrozenEventsSQL = `SELECT e.id::text, ` + attemptColumns + `
	FROM job_events e JOIN attempts a ON a.job_id = e.job_id WHERE e.id = ANY($1::uuid[]) AND e.body IS NULL
	ORDER BY e.id, a.seq`
	raceEventsOfUnfrozenEventsSQL = `SELECT e.id::text, ` + raceEventColumns + `
	FROM job_events e JOIN race_events r ON r.job_id = e.job_id WHERE e.id = ANY($1::uuid[]) AND e.body IS NULL
	ORDER BY e.id, r.id`
)

// readEvent queues r for the next batch and waits for it, or for ctx.
func (s *Store) readEvent(ctx context.Context, r *eventRead) error {
	r.done = make(chan struct{})
	if err := s.eventReads.await(ctx, r, r.done); err != nil {
		return fmt.Errorf("read webhook event: %w", err)
	}
	return r.err
}

// execEventReads runs one batch of reads in one round trip and gives each
// read its own copies of what it asked for.
func (s *Store) execEventReads(ctx context.Context, batch []*eventRead) {
	ids := make([]string, 0, len(batch))
	seen := make(map[string]bool, len(batch))
	for _, r := range batch {
		if !seen[r.id] {
			seen[r.id] = true
			ids = append(ids, r.id)
		}
	}
	s.opt.Observer.Batch("delivery_read", len(ids))
	type found struct {
		ev  *Event
		wh  *Webhook
		job *Job
	}
	byID := make(map[string]*found, len(ids))
	jobOf := func(eventID string) *Job {
		if f := byID[eventID]; f != nil {
			return f.job
		}
		return nil
	}
	err := func() error {
		b := &pgx.Batch{}
		b.Queue(eventsForDeliverySQL, ids)
		b.Queue(jobsOfUnfrozenEventsSQL, ids)
		b.Queue(attemptsOfUnfrozenEventsSQL, ids)
		b.Queue(raceEventsOfUnfrozenEventsSQL, ids)
		br := s.pool.SendBatch(ctx, b)
		defer br.Close()
		err := readRows(br, func(rows pgx.Rows) error {
			var body []byte
			var url, secret *string
			e, err := scanEvent(rows, &body, &url, &secret)
			if err != nil {
				return err
			}
			e.Body = body
			f := &found{ev: e}
			if url != nil {
				f.wh = &Webhook{URL: *url}
				if secret != nil {
					f.wh.Secret = *secret
				}
			}
			byID[e.ID] = f
			return nil
		})
		if err != nil {
			return err
		}
		if err := readRows(br, func(rows pgx.Rows) error {
			var id string
			j := &Job{Attempts: []Attempt{}, RaceEvents: []RaceEvent{}}
			if err := rows.Scan(append([]any{&id}, j.dest()...)...); err != nil {
				return err
			}
			if f := byID[id]; f != nil {
				f.job = j
			}
			return nil
		}); err != nil {
			return err
		}
		if err := readRows(br, func(rows pgx.Rows) error {
			var id string
			var a Attempt
			if err := rows.Scan(append([]any{&id}, a.dest()...)...); err != nil {
				return err
			}
			if j := jobOf(id); j != nil {
				j.Attempts = append(j.Attempts, a)
			}
			return nil
		}); err != nil {
			return err
		}
		return readRows(br, func(rows pgx.Rows) error {
			var id string
			var e RaceEvent
			if err := rows.Scan(append([]any{&id}, e.dest()...)...); err != nil {
				return err
			}
			if j := jobOf(id); j != nil {
				j.RaceEvents = append(j.RaceEvents, e)
			}
			return nil
		})
	}()
	for _, f := range byID {
		if f.job != nil {
			f.job.sumCosts()
		}
	}
	// Each read gets its own copies: two reads of one event in a batch (a
	// rescued delivery beside the stuck one) must not share what they may change.
	for _, r := range batch {
		f := byID[r.id]
		switch {
		case err != nil:
			r.err = fmt.Errorf("read webhook events: %w", err)
		case f == nil:
			r.err = ErrNotFound
		default:
			ev := *f.ev
			r.ev, r.wh = &ev, f.wh
			if f.job != nil {
				j := *f.job
				j.Attempts, j.RaceEvents = append([]Attempt{}, f.job.Attempts...), append([]RaceEvent{}, f.job.RaceEvents...)
				r.job = &j
			}
		}
		close(r.done)
	}
}
