package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/routerhq/router/migrations"
)

// migrationLockID is the advisory lock key held while migrating, so concurrent
// replicas apply each migration once.
const migrationLockID = 7_245_003_711

// Migration is one embedded SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations lists the embedded migrations in order.
func Migrations() ([]Migration, error) {
	entries, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, name := range entries {
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number and an underscore", name)
		}
		b, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("two migrations numbered %d", out[i].Version)
		}
	}
	return out, nil
}

// Migrate applies pending migrations under an advisory lock and returns the names
// applied. Each migration commits on its own: when one fails, the names of
// those applied before it are returned with the error.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	all, err := Migrations()
	if err != nil {
		return nil, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	if err := s.lockForMigration(ctx, conn.Conn()); err != nil {
		return nil, err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLockID) //nolint:errcheck
	if err := checkMigrationsTable(ctx, conn); err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return nil, err
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		applied[v] = true
	}
	var done []string
	for _, m := range all {
		if applied[m.Version] {
			continue
		}
		err := inMigrationTx(ctx, conn.Conn(), func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("apply migration %s: %w", m.Name, err)
		}
		done = append(done, m.Name)
	}
	river, err := migrateRiver(ctx, conn.Conn())
	return append(done, river...), err
}

// lockForMigration takes the migration lock on conn. While another session
// holds it — a replica migrating, or one whose migration waits behind an
// operator's lock on a table — it says so before waiting and again once it
// has the lock: waiting in silence, a router starting up looks hung. The try
// first keeps the usual case (nobody holds it) to one round trip.
func (s *Store) lockForMigration(ctx context.Context, conn *pgx.Conn) error {
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", migrationLockID).Scan(&got); err != nil {
		return fmt.Errorf("take migration lock: %w", err)
	}
	if got {
		return nil
	}
	holder := migrationLockHolder(ctx, conn)
	s.opt.Log.Info("waiting for another process's migration lock on the database", holder...)
	start := time.Now()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLockID); err != nil {
		return fmt.Errorf("wait for the migration lock, which another session holds (%s; see pg_stat_activity): %w", attrsText(holder), err)
	}
	s.opt.Log.Info("migration lock obtained", "waited", time.Since(start).Round(time.Millisecond))
	return nil
}

// migrationLockHolder names the session holding the migration lock, as log
// attributes, or says it is unknown: it may have let go since the try, or
// pg_stat_activity may hide it from this role. An advisory lock on a bigint
// key shows in pg_locks as classid (high 32 bits), objid (low 32 bits) and
// objsubid 1.
func migrationLockHolder(ctx context.Context, conn *pgx.Conn) []any {
	var pid int32
	var app, addr, state string
	err := conn.QueryRow(ctx, `SELECT l.pid, coalesce(a.application_name, ''), coalesce(host(a.client_addr), ''), coalesce(a.state, '')
		FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND l.classid = ($1::bigint >> 32)::oid AND l.objid = ($1::bigint & 4294967295)::oid
		LIMIT 1`, int64(migrationLockID)).Scan(&pid, &app, &addr, &state)
	if err != nil {
		return []any{"holder_pid", "unknown"}
	}
	return []any{"holder_pid", pid, "holder_application_name", app, "holder_client_addr", addr, "holder_state", state}
}

// attrsText writes log attributes (key, value pairs) as key=value words.
func attrsText(kv []any) string {
	parts := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, fmt.Sprintf("%v=%v", kv[i], kv[i+1]))
	}
	return strings.Join(parts, " ")
}

// migrateRiver applies River's own migrations (the delivery queue's tables) in
// the schema of the connection's search_path, under the same lock.
func migrateRiver(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	m, err := rivermigrate.New(riverpgxv5.New(nil), nil)
	if err != nil {
		return nil, fmt.Errorf("river migrations: %w", err)
	}
	// One transaction per migration: a later one uses an enum value an earlier
	// one adds, which PostgreSQL allows only after that commit.
	var done []string
	for _, v := range m.AllVersions() {
		var res *rivermigrate.MigrateResult
		err := inMigrationTx(ctx, conn, func(tx pgx.Tx) error {
			var err error
			res, err = m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{TargetVersion: v.Version})
			return err
		})
		if err != nil {
			return done, fmt.Errorf("apply River's migration %d: %w", v.Version, err)
		}
		for _, a := range res.Versions {
			done = append(done, fmt.Sprintf("river_%03d_%s", a.Version, a.Name))
		}
	}
	return done, nil
}

// How long one migration waits for a table's lock before it gives up and
// tries again, and how many times. A migration's ALTER or CREATE INDEX queues
// behind any transaction using the table, and every write to the table then
// queues behind it: without a bound, one long transaction (a report, a stuck
// client) stops every replica's claims and wins for as long as it lasts. Each
// try stalls the table's writers for at most migrationLockWait; between tries
// they run.
var (
	migrationLockWait  = time.Second
	migrationLockTries = 30
	migrationLockPause = 2 * time.Second
)

// inMigrationTx runs fn in a transaction whose lock waits are bounded
// (lock_timeout), trying again while it fails for want of a lock; fn is the
// whole of one migration, so a failed try leaves nothing of it behind.
func inMigrationTx(ctx context.Context, conn *pgx.Conn, fn func(tx pgx.Tx) error) error {
	for try := 1; ; try++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true)", fmt.Sprintf("%dms", migrationLockWait.Milliseconds())); err != nil {
				return err
			}
			return fn(tx)
		})
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != pgerrcode.LockNotAvailable {
			return err
		}
		if try >= migrationLockTries {
			return fmt.Errorf("%w: waited %d times %s for a table's lock, which other transactions hold (look for long ones in pg_stat_activity); "+
				"nothing of this migration was applied: run it again once they end", err, try, migrationLockWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(migrationLockPause):
		}
	}
}

// MigrationsCurrent reports whether every embedded migration, and every
// migration of River's this binary knows, has been applied. Versions newer
// than this binary's are ignored, on both sides: during a rolling upgrade to a
// router with newer migrations (or a newer River) the older replicas stay
// ready, and so does a rollback, instead of all leaving the load balancer at
// once. River's own ExistingVersions fails on such a version ("not found in
// migrator bundle"), so River's table is read here. Without River's tables
// (never migrated, or only by a River older than its migration 5) it reports
// not current, with no error.
func (s *Store) MigrationsCurrent(ctx context.Context) (bool, error) {
	all, err := Migrations()
	if err != nil {
		return false, err
	}
	if err := checkMigrationsTable(ctx, s.pool); err != nil {
		return false, err
	}
	var n int
	err = s.pool.QueryRow(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ANY($1)",
		versions(all)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read schema_migrations: %w", err)
	}
	if n != len(all) {
		return false, nil
	}
	return s.riverMigrationsCurrent(ctx)
}

// riverMigrationsCurrent reports whether River's main line in the schema of
// the search_path holds every version this binary's River migrator knows. The
// table lacks the line column before River's migration 5 (every row was the
// main line's then); such a table lacks versions this binary knows anyway.
func (s *Store) riverMigrationsCurrent(ctx context.Context) (bool, error) {
	m, err := rivermigrate.New(riverpgxv5.New(nil), nil)
	if err != nil {
		return false, fmt.Errorf("river migrations: %w", err)
	}
	known := make([]int64, 0, len(m.AllVersions()))
	for _, v := range m.AllVersions() {
		known = append(known, int64(v.Version))
	}
	var withLine bool
	err = s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_attribute
		WHERE attrelid = to_regclass('river_migration') AND attname = 'line' AND NOT attisdropped)`).Scan(&withLine)
	if err != nil {
		return false, fmt.Errorf("read River's migrations: %w", err)
	}
	if !withLine {
		return false, nil
	}
	var n int
	err = s.pool.QueryRow(ctx, `SELECT count(*) FROM river_migration WHERE line = 'main' AND version = ANY($1)`, known).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read River's migrations: %w", err)
	}
	return n == len(known), nil
}

// ErrForeignMigrations: the schema_migrations table of the connection's
// search_path is not the router's but another tool's (Rails, golang-migrate,
// …: they use the same name). Migrating there would fail on its columns, or
// mix two tools' versions; the router needs a schema of its own.
var ErrForeignMigrations = errors.New("schema_migrations belongs to another tool")

// queryRower is a pool or a connection.
type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// checkMigrationsTable refuses a schema_migrations that is not the router's
// in the schema Migrate creates its own in (the first of the search_path's):
// the router's has an integer version and a text name (see Migrate). None at
// all is fine (a new database, or a new schema).
func checkMigrationsTable(ctx context.Context, q queryRower) error {
	var schema, columns string
	var ours bool
	err := q.QueryRow(ctx, `SELECT n.nspname,
			string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum),
			bool_or(a.attname = 'version' AND a.atttypid = 'int4'::regtype) AND bool_or(a.attname = 'name' AND a.atttypid = 'text'::regtype)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE c.relname = 'schema_migrations' AND n.nspname = current_schema()
		GROUP BY n.nspname`).Scan(&schema, &columns, &ours)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && ours {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	return fmt.Errorf("%w: the table %s.schema_migrations (%s) is not the router's (version integer, name text), "+
		"so the router cannot keep its migrations there: the database, or its schema %s, is another application's; "+
		"give the router a schema of its own: CREATE SCHEMA router, and add search_path=router to database_url "+
		"(postgres://user@host/db?search_path=router)", ErrForeignMigrations, schema, columns, schema)
}

func versions(ms []Migration) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.Version
	}
	return out
}
