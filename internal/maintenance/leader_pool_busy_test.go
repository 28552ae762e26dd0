package maintenance_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The lease's renewal used to go through the pool the jobs use: when they
// held every connection for longer than a renewal interval (a burst, a slow
// batch), the renewal timed out waiting for one though PostgreSQL answered at
// once, the replica gave up the lead and logged that the database did not
// answer — and under load every replica did the same, so nobody led. It now
// goes out on a connection of its own.
func TestLeaderKeepsTheLeadWhileItsPoolIsBusy(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	cfg.MaxConns, cfg.MinConns = 2, 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := store.New(pool, store.Options{})
	var logs bytes.Buffer
	e := maintenance.NewElector(st, "maintenance", "replica-a", 3*time.Second, slog.New(slog.NewTextHandler(&logs, nil)))
	if !e.Once(ctx) {
		t.Fatal("did not lead at first")
	}
	var held []*pgxpool.Conn
	for range 2 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	if err := db.Pool.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	led := e.Once(ctx)
	if !led || !e.IsLeader() {
		t.Errorf("the leader gave up the lead because its own pool was busy (Once=%v IsLeader=%v); log:\n%s", led, e.IsLeader(), logs.String())
	}
	if strings.Contains(logs.String(), "the database did not answer") {
		t.Errorf("the log blames the database, which answered at once: %s", logs.String())
	}
	if err := e.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
}

// A database at its connection limit refuses the lease a connection of its
// own: the renewal then waits for a pooled one. A wait that outlasts the
// renewal interval, the database answering throughout, is logged as this
// replica's busy pool — not as a database that did not answer — and the
// renewal goes through on the pool once a connection is free.
func TestLeaderAtConnectionLimitSaysItsPoolWasBusy(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	cfg := db.LimitedRole(t, 2)
	store.ConfigurePool(cfg)
	cfg.MaxConns, cfg.MinConns = 2, 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := store.New(pool, store.Options{})
	var held []*pgxpool.Conn // the role's two connections, taken by the jobs
	for range 2 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	logs := make(logRecords, 16)
	e := maintenance.NewElector(st, "maintenance", "replica-a", 3*time.Second, slog.New(logs))
	if e.Once(ctx) || e.IsLeader() {
		t.Fatal("led with no connection to lead on")
	}
	rec := <-logs
	if !strings.Contains(rec.Message, "no free database connection") || strings.Contains(rec.Message, "did not answer") {
		t.Fatalf("a renewal that waited for this replica's busy pool was logged as %q", rec.Message)
	}
	if err := attrErr(rec); !errors.Is(err, store.ErrNoFreeConnection) {
		t.Fatalf("the renewal's error: %v, want store.ErrNoFreeConnection", err)
	}
	held[0].Release()
	held = held[1:]
	if !e.Once(ctx) {
		t.Fatal("the renewal did not go through on the pool's free connection")
	}
	if err := e.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
}
