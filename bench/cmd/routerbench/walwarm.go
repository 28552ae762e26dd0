package main

import (
	"context"
	"fmt"
	"time"
)

// WALWarm is what preconditioning the database's WAL did (see warmWAL).
type WALWarm struct {
	Segments int           // WAL segments filled and recycled
	SegBytes int64         // bytes per segment
	Took     time.Duration // how long it took
	Err      string
}

// warmWAL gives the freshly initialised cluster the WAL segments a database
// in service already has.
//
// A new cluster has one WAL segment. Each time its WAL reaches the end of a
// segment the next one is created — 16 MB written out and fsynced — while
// the WAL write lock is held: every commit in the meantime waits. At the
// bench's load that is a new segment every two seconds and a 30–40 ms stall
// of every request in flight (seen as WALInitWrite and WALInitSync waits in
// pg_stat_activity, with every other backend waiting on WALWrite). A server
// in service does not do this: each checkpoint renames the segments it no
// longer needs into the next ones (recycling), and commits write into files
// that exist. So before measuring, the bench fills segments (a tiny WAL
// record, then pg_switch_wal, segs times) and runs a checkpoint, which
// recycles them: the run writes into existing files, as in service.
func (d *DB) warmWAL(ctx context.Context, segs int) WALWarm {
	t := time.Now()
	w := WALWarm{}
	err := func() error {
		if err := d.pool.QueryRow(ctx, `SELECT setting::bigint * (CASE unit WHEN 'B' THEN 1 WHEN 'kB' THEN 1024 ELSE 1048576 END)
			FROM pg_settings WHERE name = 'wal_segment_size'`).Scan(&w.SegBytes); err != nil {
			return fmt.Errorf("wal_segment_size: %w", err)
		}
		for range segs {
			if _, err := d.pool.Exec(ctx, `SELECT pg_logical_emit_message(false, 'routerbench', 'warm'), pg_switch_wal()`); err != nil {
				return fmt.Errorf("fill a WAL segment: %w", err)
			}
			w.Segments++
		}
		if _, err := d.pool.Exec(ctx, `CHECKPOINT`); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		return nil
	}()
	if err != nil {
		w.Err = err.Error()
	}
	w.Took = time.Since(t)
	return w
}

func writeWALWarm(m *md, w WALWarm) {
	switch {
	case w.Err != "":
		m.p("- WAL preconditioning failed after %d segments (%s): the run may stall on new WAL segments", w.Segments, w.Err)
	case w.Segments > 0:
		m.p("- the database was created for this run; before measuring, %d WAL segments (%d MB) were filled and recycled by a checkpoint in %s, so the run writes WAL into existing files as a server in service does (a fresh cluster creates and fsyncs a new segment every few seconds under this load, stalling every commit for tens of milliseconds)",
			w.Segments, int64(w.Segments)*w.SegBytes>>20, w.Took.Round(100*time.Millisecond))
	}
}
