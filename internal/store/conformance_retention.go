package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DeleteOldConformanceRunsFrom deletes conformance runs that finished more
// than after ago on the database clock, except those the gate
// (ConformanceStandingOf) or the operator views (LatestConformanceRuns) can
// still read (conformanceRunKeptSQL), so that deleting them changes none of
// their answers. It examines at most batch runs, in id order after from (0:
// from the first), in one short transaction, and returns how many it
// deleted, the id to walk on from, and whether the walk is done: it reached
// the last run, or a batch of runs none of which is old enough (runs are
// numbered in about the order they finished, as both are set by the one
// INSERT: a run numbered out of that order by more than a batch waits for
// the runs before it to be old enough). A run another
// transaction holds is passed over (SKIP LOCKED) until the next walk, which
// starts again from 0: a run kept now (its group's latest) may be deletable
// then. A walk reads the kept old runs again, a few per group: its cost
// grows with the groups, not with the history.
func (s *Store) DeleteOldConformanceRunsFrom(ctx context.Context, after time.Duration, batch int, from int64) (deleted int, next int64, done bool, err error) {
	if after <= 0 || batch <= 0 {
		// after 0 would take every run but the kept ones, whatever their
		// age; retention.conformance_runs 0s means keep every run, and the
		// cleaner then does not call this at all.
		return 0, from, true, errors.New("delete old conformance runs: the retention and the batch must be positive")
	}
	var scanned, young int
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '2s'`); err != nil {
			return err
		}
		return tx.QueryRow(ctx, deleteOldConformanceRunsSQL, after.Microseconds(), batch, from).
			Scan(&deleted, &next, &scanned, &young)
	})
	if err != nil {
		return 0, from, false, fmt.Errorf("delete old conformance runs: %w", err)
	}
	return deleted, next, scanned < batch || young == scanned, nil
}

// deleteOldConformanceRunsSQL examines the runs after id $3, at most $2 of
// them, by the primary key, deletes those that finished more than $1
// microseconds ago and are not kept, and returns how many it deleted, the
// last id it examined, how many it examined and how many of those are too
// young. Each candidate is locked with SKIP LOCKED before it is deleted.
var deleteOldConformanceRunsSQL = `
	WITH scanned AS (
	    SELECT r.id, r.finished_at FROM conformance_runs r
	    WHERE r.id > $3
	    ORDER BY r.id LIMIT $2
	), chosen AS (
	    SELECT r.id FROM conformance_runs r
	    WHERE r.id IN (SELECT s.id FROM scanned s)
	      AND r.finished_at < now() - $1::bigint * interval '1 microsecond'
	      AND NOT (` + conformanceRunKeptSQL("r") + `)
	    FOR UPDATE OF r SKIP LOCKED
	), gone AS (
	    DELETE FROM conformance_runs d USING chosen c WHERE d.id = c.id RETURNING d.id
	)
	SELECT (SELECT count(*) FROM gone)::int,
	    coalesce((SELECT max(s.id) FROM scanned s), $3),
	    (SELECT count(*) FROM scanned)::int,
	    (SELECT count(*) FROM scanned s WHERE s.finished_at >= now() - $1::bigint * interval '1 microsecond')::int`

// conformanceRunKeptSQL is the condition on the run aliased r under which
// the gate or the operator views can read it, or their answers depend on
// it. They read, per group of provider × model × prompt × prompt version
// (the views, and the gate asked for a model) and per group of provider ×
// prompt × prompt version (the gate asked for any model):
//
//   - the latest run (by finished_at, then id): kept (1). The latest run of
//     the wider group is the latest of its own model's group, so that one
//     rule serves both groupings, and the views' walk over the groups finds
//     every group still there;
//   - the finish of the latest pass: kept (2); the same holds of it, and it is
//     also every read of whether a model or version passed at all (the
//     gate's other passed versions and models, and the order of those models
//     by their latest pass);
//   - when the latest passed, the latest failure that finished after it
//     started (overlappingFailureSQL): every run that finished after the
//     latest run of either group started is kept (3, 4).
//
// Nothing reads further back: the digests compared (SamePromptContent,
// SameTarget) are the latest run's own, and a legacy run is kept or not by
// the same rules. As long as no run takes longer than the retention
// (config.MinConformanceRetention), a run recorded later cannot need a run
// deleted before: a new latest run's overlapping failures finished after it
// started, within the retention. Each rule is one lookup in an index of
// migrations 0003 and 0025 (the group always holds r, so no subquery is
// NULL).
func conformanceRunKeptSQL(r string) string {
	group := "n.provider = " + r + ".provider AND n.model = " + r + ".model AND n.prompt = " + r + ".prompt AND n.prompt_version = " + r + ".prompt_version"
	anyModel := "n.provider = " + r + ".provider AND n.prompt = " + r + ".prompt AND n.prompt_version = " + r + ".prompt_version"
	return `
	    ` + r + `.id = (SELECT n.id FROM conformance_runs n WHERE ` + group + `
	        ORDER BY n.finished_at DESC, n.id DESC LIMIT 1)
	    OR (` + r + `.passed AND NOT EXISTS (SELECT FROM conformance_runs n WHERE ` + group + `
	        AND n.passed AND n.finished_at > ` + r + `.finished_at))
	    OR ` + r + `.finished_at > (SELECT n.started_at FROM conformance_runs n WHERE ` + group + `
	        ORDER BY n.finished_at DESC, n.id DESC LIMIT 1)
	    OR ` + r + `.finished_at > (SELECT n.started_at FROM conformance_runs n WHERE ` + anyModel + `
	        ORDER BY n.finished_at DESC, n.id DESC LIMIT 1)`
}
