package store_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// RenewLeases says which of the jobs asked for it missed: a job with a row
// (its own, or an in-flight attempt's) another transaction held, which it
// skipped. The runner retries only those (the urgent renewals of late
// claims), not every job it sent. An abandoned attempt is not renewed, and
// does not make its job missed.
func TestRenewLeasesSaysWhichJobsItMissed(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	var ids, atts []string
	for i, owner := range []string{"r1", "r1", "r1", "r1", "r2"} {
		nj := newJob(t, "acme", "triage", "missed-"+itoa(i), `{}`)
		nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, owner, time.Second
		j, _, err := b.st.CreateJob(ctx, nj)
		if err != nil {
			t.Fatal(err)
		}
		ids, atts = append(ids, j.ID), append(atts, j.Attempts[0].ID)
	}
	// Job 1's attempt row and job 2's own row are held; job 3's attempt was
	// abandoned by its run.
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT FROM attempts WHERE id = $1 FOR UPDATE`, atts[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT FROM jobs WHERE id = $1 FOR UPDATE`, ids[2]); err != nil {
		t.Fatal(err)
	}
	renewal, err := b.st.RenewLeases(ctx, "r1", ids, []string{atts[3]}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	wantMissed := []string{ids[1], ids[2]}
	slices.Sort(wantMissed)
	slices.Sort(renewal.Missed)
	if !slices.Equal(renewal.Missed, wantMissed) {
		t.Fatalf("missed %v, want %v (the r1 jobs with a held row), not the free one %s, the one with an abandoned attempt %s, nor r2's %s",
			renewal.Missed, wantMissed, ids[0], ids[3], ids[4])
	}
	wantAttempts := []store.RenewedAttempt{{JobID: ids[0], AttemptID: atts[0]}, {JobID: ids[2], AttemptID: atts[2]}}
	slices.SortFunc(renewal.Attempts, func(a, b store.RenewedAttempt) int { return compareStrings(a.JobID, b.JobID) })
	slices.SortFunc(wantAttempts, func(a, b store.RenewedAttempt) int { return compareStrings(a.JobID, b.JobID) })
	if !slices.Equal(renewal.Attempts, wantAttempts) {
		t.Fatalf("renewed attempts %v, want %v", renewal.Attempts, wantAttempts)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	long := `lease_expires_at > now() + interval '30 minutes'`
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND `+long, atts[3]); n != 0 {
		t.Fatal("the abandoned attempt's lease was renewed: recovery could not take it over until its whole run ended")
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// A waiting renewal (RenewLeasesWaiting) whose caller gives up on it at its
// deadline is ended by the server too. The client only drops the connection
// then, and asks for the statement's cancellation on a new one (pgx's cancel
// request, best effort); when that does not get through (here: refused, as
// through a partition, a proxy, a listener that does not answer), the
// statement goes on waiting for the held row, holding the rows it locked,
// until that row is released — unless the server was told when to end it.
func TestWaitingRenewalEndsOnTheServerBeforeItsDeadline(t *testing.T) {
	b := setup(t)
	jobID, attemptID := inFlight(t, b, "renew-server-timeout")
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	var refuse atomic.Bool
	var d net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if refuse.Load() {
			return nil, errors.New("dial refused by the test (after the renewal's connection was opened)")
		}
		return d.DialContext(ctx, network, addr)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool, store.Options{})
	defer st.Close()
	// The renewal's own connection is opened, and kept; no other gets through.
	if _, err := st.RenewLeases(ctx, "replica-a", []string{jobID}, nil, time.Hour); err != nil {
		t.Fatal(err)
	}
	refuse.Store(true)
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT FROM attempts WHERE id = $1 FOR UPDATE`, attemptID); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, renewErr := st.RenewLeasesWaiting(rctx, "replica-a", []string{jobID}, nil, time.Hour)
	if renewErr == nil {
		t.Fatal("a waiting renewal of a row held throughout succeeded")
	}
	// The row is still held: a renewal still running on the server waits for it.
	holder := tx.Conn().PgConn().PID()
	var waiting []string
	rows, err := b.db.Pool.Query(ctx, `SELECT query FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, holder)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			t.Fatal(err)
		}
		waiting = append(waiting, q)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var locks int
	// Only the locks awaited behind the held row: the cluster is shared with
	// the other packages' tests, whose own waits are not this renewal's.
	if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted AND $1 = ANY(pg_blocking_pids(pid))`, holder).Scan(&locks); err != nil {
		t.Fatal(err)
	}
	if len(waiting) > 0 || locks > 0 {
		t.Fatalf("after the renewal gave up, %d statements still wait for the held row (%d locks awaited): %.200q; "+
			"the server should have ended the renewal itself (a statement and lock timeout under the caller's deadline)", len(waiting), locks, waiting)
	}
	if !strings.Contains(renewErr.Error(), "ended by the database as the time it was given ran out") {
		t.Fatalf("the renewal's error %q does not say the database ended it as its time ran out", renewErr)
	}
}
