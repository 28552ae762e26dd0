// Package store owns the router's PostgreSQL state: migrations, jobs, idempotency
// keys, attempts, race events and API keys. Every guarantee the product makes —
// one job per key, the blocking rule, compare-and-swap completion, key expiry — is
// a constraint or a conditional statement here, evaluated on the database clock.
//
// Database errors are translated at this boundary: pgx.ErrNoRows never leaves the
// package (callers get ErrNotFound), and constraint races come back as the typed
// errors below. It must not call providers or know about HTTP.
package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Errors callers can test with errors.Is.
var (
	// ErrNotFound: no such row (or not the caller's).
	ErrNotFound = errors.New("not found")
	// ErrKeyReused: the idempotency key is already bound to a different request.
	ErrKeyReused = errors.New("idempotency key reused with a different request")
	// ErrAttemptBlocked: a sibling attempt is starting or unknown (SPEC §3).
	ErrAttemptBlocked = errors.New("an attempt of this job is starting or unknown")
	// ErrAttemptLimit: max_attempts reached.
	ErrAttemptLimit = errors.New("attempt limit reached")
	// ErrInflightLimit: max_inflight attempts are in flight (temporary).
	ErrInflightLimit = errors.New("in-flight limit reached")
	// ErrJobFinished: the job is in a state that does not allow the change.
	ErrJobFinished = errors.New("job is finished")
	// ErrStateConflict: the row was not in the state the change requires.
	ErrStateConflict = errors.New("state conflict")
	// ErrLeaseLost: another process holds the job's orchestration lease.
	ErrLeaseLost = errors.New("job lease lost")
	// ErrUnblocked: the unknown attempt that stopped a job's race was resolved
	// before the job was settled; the race may go on (SettleBlockedJobAs).
	ErrUnblocked = errors.New("no attempt of the job is unknown any more")
	// ErrInvalidResult: a resolution's result fails the prompt's contract.
	ErrInvalidResult = errors.New("result fails the contract")
)

// Store is the router's database handle. Safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	opt  Options

	// paths batches the success path's commits: key claims (CreateJob) and
	// compare-and-swaps (Complete), together (see pathCommit).
	paths group[pathCommit]
	// deliveries batches webhook deliveries' writes (FreezeEventBody,
	// RecordDelivery): see deliveryWrite.
	deliveries group[deliveryWrite]
	// eventReads batches webhook deliveries' reads (EventForDelivery).
	eventReads group[eventRead]

	// origin tags the notifications of this store's batched wins, so that a
	// listener paired with it can leave them to the in-memory announcement
	// (Listener.SkipNotificationsOf).
	origin string

	// wake sends River's notification after batched wins that wrote outbox
	// events (see outboxWake).
	wake outboxWake

	// waits is the Observer when it times commit waits (CommitWaitObserver).
	waits CommitWaitObserver

	// onLostClaim, in tests, is told how handOverLostClaim ended.
	onLostClaim func(err error)
	// lostClaims counts the claims handed over by handOverLostClaim.
	lostClaims atomic.Int64
	// bg tracks the writes that outlive their call (hand-overs of lost
	// claims, wakes of webhook deliveries): Close waits for them.
	bg background
	// heldKeyTurn lets one lost claim's hand-over at a time wait on a key
	// row still held past its first budget (inHeldKeyTurn).
	heldKeyTurn chan struct{}
	// alone bounds the claims run alone at once, aloneOwed the wins and
	// delivery writes (runAlone): each a quarter of the pool.
	alone, aloneOwed aloneTurns
	// settledByNoRun is told the state of each job settled outside any job
	// run: by handOverLostClaim, or cancelled by CancelJob
	// (OnSettledByNoRun); nil: nobody is.
	settledByNoRun atomic.Pointer[func(state string)]

	// afterClaimCommit, in tests, runs after a claim batch committed and
	// before any of its callers is told.
	afterClaimCommit func(firstKey string)
	// afterCreateAttempt, in tests, runs after CreateAttempt's transaction
	// committed and before its caller is told; an error it returns is
	// CreateAttempt's, as if the answer had been lost (SetAfterCreateAttempt).
	afterCreateAttempt atomic.Pointer[func(a *Attempt) error]
	// onPlan, in tests, sees the plan (EXPLAIN, JSON) of each batched
	// statement, made in the same transaction just before it runs.
	onPlan func(plan []byte)
	// onBatched, in tests, is told of each batched transaction sent
	// (queryBatched), with its statements.
	onBatched func(stmts int)

	// acquireWait bounds a batch's wait for its connection (batchAcquireWait;
	// shorter in tests), and settleWait each database call that a win or a
	// claim makes without its caller's cancellation once its batch has
	// failed or lost (settleWait; shorter in tests).
	acquireWait, settleWait time.Duration

	// probe is the readiness probe's own connection under way, if any
	// (pingOwnConn): one at a time per Store.
	probe ownPings
	// lease is the leader lease's own connection (TryLead, Resign), and
	// renew the job and attempt leases' renewal's (RenewLeases): one each,
	// so neither waits behind the other; Close closes both.
	lease, renew leaseConn
}

// Options tune the store.
type Options struct {
	// KeyRetention is how long an idempotency key stays bound to its job after
	// the job becomes terminal (SPEC §5.5). Default 24h.
	KeyRetention time.Duration
	// RedeliveryWindow is how long a webhook event may stay pending and still
	// be delivered (config.Webhooks.RedeliveryWindow): retention
	// keeps a job with an event pending for less than this. Default
	// DefaultRedeliveryWindow.
	RedeliveryWindow time.Duration
	// Observer counts durable commits and batch sizes (and, if it is a
	// CommitWaitObserver, times the success path's commit waits); nil
	// counts nothing.
	Observer Observer
	// Log receives what the store does on its own, in the background (the
	// hand-over of a claim whose outcome was lost); nil logs nothing.
	Log *slog.Logger
}

// WithDefaults fills unset options.
func (o Options) WithDefaults() Options {
	if o.KeyRetention <= 0 {
		o.KeyRetention = 24 * time.Hour
	}
	if o.RedeliveryWindow <= 0 {
		o.RedeliveryWindow = DefaultRedeliveryWindow
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// New wraps a pool. A replica makes one Store for its pool: the readiness
// probe's connection (Ping), the leader lease's (TryLead, Resign) and the
// lease renewal's (RenewLeases) are one at a time each per Store, beside the
// pool. Close the Store before its pool
// (Close); the pool stays the caller's to close.
func New(pool *pgxpool.Pool, opt Options) *Store {
	s := &Store{pool: pool, opt: opt.WithDefaults(), origin: rand.Text()[:16],
		acquireWait: batchAcquireWait, settleWait: settleWait}
	s.lease.init(pool, "the leader lease")
	s.renew.init(pool, "the lease renewal")
	s.heldKeyTurn = make(chan struct{}, 1)
	var maxConns int32
	if pool != nil {
		maxConns = pool.Config().MaxConns
	}
	s.alone.slots = make(chan struct{}, aloneTurnsFor(maxConns))
	s.aloneOwed.slots = make(chan struct{}, aloneTurnsFor(maxConns))
	s.waits, _ = s.opt.Observer.(CommitWaitObserver)
	s.paths = group[pathCommit]{name: "the success path's claims and wins", size: batchSize, maxLeaders: maxBatchesInFlight, exec: s.execPathCommits}
	s.deliveries = group[deliveryWrite]{name: "webhook delivery writes", size: deliveryBatchSize, maxLeaders: maxBatchesInFlight, exec: s.execDeliveryWrites,
		weight: (*deliveryWrite).bytes, maxWeight: deliveryBatchBytes}
	s.eventReads = group[eventRead]{name: "webhook delivery reads", size: eventReadBatchSize, maxLeaders: maxBatchesInFlight, exec: s.execEventReads}
	return s
}

// batchSize is the most claims and wins carried by one batch, and
// maxBatchesInFlight how many batches go out at once: a second one only when
// a full batch is waiting behind the first. Few, large batches: a caller that
// finds a batch running waits for it either way, and PostgreSQL does less work
// per job in one statement of many rows than in several concurrent ones,
// whose commits also queue on the WAL write lock. Measured with alternating
// quick runs of `make bench`'s overhead scenario (docs/performance.md): from 8
// and 8 to 32 and 2, router-added p99 at 64 callers ~20 -> ~18 ms (median of
// 7-9 runs each), throughput at 256 callers 3,350-3,819 -> 3,884-5,173 req/s
// and round trips per job 0.27 -> 0.07; more batches in flight (a second one
// as soon as anything waits) was worse at every caller count.
const (
	batchSize          = 32
	maxBatchesInFlight = 2
)

// PoolConfig is the pool configuration Connect uses for url: pgxpool's
// reading of it, with the router's defaults for what the URL does not say
// (pool size, connect_timeout); an error says what in url is wrong. `config
// check` calls it to refuse what Connect would.
func PoolConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w (expected postgres://user@host:port/db)", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		// pgx's default (the number of CPUs, at least 4) starves a router that
		// holds many requests open; pool_max_conns in the URL overrides this.
		cfg.MaxConns = 20
	}
	if !strings.Contains(url, "pool_min_conns") {
		// warm connections: no dial on the first requests of a burst (never
		// more than the pool may hold: pool_max_conns=2 keeps 2)
		cfg.MinConns = min(4, cfg.MaxConns)
	}
	if cfg.MinConns > cfg.MaxConns {
		if strings.Contains(url, "pool_max_conns") {
			// pgxpool takes it, and keeps dialling connections the pool may
			// not hold.
			return nil, fmt.Errorf("database URL: pool_min_conns=%d is more than pool_max_conns=%d: lower pool_min_conns or raise pool_max_conns",
				cfg.MinConns, cfg.MaxConns)
		}
		// A minimum asked above the router's default maximum raises it.
		cfg.MaxConns = cfg.MinConns
	}
	if !strings.Contains(url, "connect_timeout") && os.Getenv("PGCONNECT_TIMEOUT") == "" {
		// pgx, like libpq, waits for ever by default: a proxy, load balancer
		// or firewall that accepts the connection and never passes it on
		// would hang the router's start and every command. connect_timeout
		// (in the URL, or PGCONNECT_TIMEOUT) overrides this; 0 waits for ever.
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	return cfg, nil
}

// Connect opens a pool for url and checks it answers. tune, if given, adjusts
// the pool's configuration first (for example a statement tracer).
func Connect(ctx context.Context, url string, tune ...func(*pgxpool.Config)) (*pgxpool.Pool, error) {
	cfg, err := PoolConfig(url)
	if err != nil {
		return nil, err
	}
	for _, f := range tune {
		f(cfg)
	}
	ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		at := cfg.ConnConfig.Host
		if !strings.HasPrefix(at, "/") { // not a socket directory
			at = net.JoinHostPort(at, strconv.Itoa(int(cfg.ConnConfig.Port)))
		}
		if ctx.Err() != nil {
			// Stopped (Ctrl-C, SIGTERM): Close waits for the pool's own
			// dials of its pool_min_conns, which pgxpool starts on a context
			// no caller cancels, for up to connect_timeout (a minute with
			// connect_timeout=0); a stopping process need not wait for
			// connections it will never use.
			go pool.Close()
			// Said as stopped, not "unreachable": the database may be fine
			// (a slow server, a proxy), and an operator told "unreachable"
			// goes looking at the network. The cause is the stop's (main's
			// "stopped by SIGTERM"), else ctx's own error.
			return nil, fmt.Errorf("stopped before the database at %s answered (%w); nothing was done", at, context.Cause(ctx))
		}
		pool.Close()
		if timeout := cfg.ConnConfig.ConnectTimeout; timeout > 0 && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("database at %s did not answer within %s (connect_timeout): %w; check the host and port of database_url (DATABASE_URL) — "+
				"a proxy, load balancer or firewall may accept connections and never pass them on — or, for a database that is slow to answer, "+
				"allow longer with connect_timeout=SECONDS in the URL", at, timeout, err)
		}
		return nil, connectError(at, err)
	}
	return pool, nil
}

// connectError says why the database at `at` could not be used, and what to
// check: a server that answered and refused the login or the database (a
// wrong user, password or database name) is not "unreachable", and sending
// the operator to the network would waste their time.
func connectError(at string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == pgerrcode.InvalidCatalogName:
			return fmt.Errorf("the database server at %s answered, but has no such database: %w; check the database name in database_url (DATABASE_URL), "+
				"or create it (createdb)", at, err)
		case strings.HasPrefix(pgErr.Code, "28"): // invalid authorization: no such role, a wrong password, no pg_hba.conf entry
			return fmt.Errorf("the database server at %s refused the login: %w; check the user and password in database_url (DATABASE_URL), "+
				"and that the server's pg_hba.conf lets this user in from here", at, err)
		case strings.HasPrefix(pgErr.Code, "53"): // insufficient resources: too many connections, out of memory or disk
			return fmt.Errorf("the database server at %s has no room for another connection: %w; the URL is right: raise the server's max_connections "+
				"(or the role's CONNECTION LIMIT), or lower pool_max_conns in database_url so that replicas × pool_max_conns fits", at, err)
		case pgErr.Code == pgerrcode.CannotConnectNow: // 57P03: starting up, shutting down, in recovery
			return fmt.Errorf("the database server at %s is not accepting connections yet (starting up, shutting down or in recovery): %w; try again shortly", at, err)
		}
		return fmt.Errorf("the database server at %s refused the connection: %w; check database_url (DATABASE_URL)", at, err)
	}
	return fmt.Errorf("database unreachable at %s: %w; check that PostgreSQL runs there and the host and port of database_url (DATABASE_URL)", at, err)
}

// DefaultConnectTimeout bounds a connection to the database (TCP, TLS and
// authentication) when neither the URL's connect_timeout nor
// PGCONNECT_TIMEOUT sets one.
const DefaultConnectTimeout = 10 * time.Second

// inTx runs fn in a transaction, committing when fn returns nil. A
// transaction the database rolled back whole — chosen as a deadlock's victim
// (40P01) or a serialization failure (40001), by any of its statements or its
// commit — is run again from the start, up to txRetries more times: nothing
// of it was kept, so the change is made as if the other transaction had come
// first. Two writers that lock the same rows in opposite orders (a
// cancellation locks the job's row and then its key's; a batch's resend of
// the key locks the key's row and then the batch's win the job's) then both
// succeed instead of one answering an error nothing else retries. fn must
// therefore be safe to run again: it assigns (never accumulates) what it
// hands out, resetting at its start whatever only some of its paths set, and
// has no effect outside the transaction (see inTxOnce).
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	var err error
	for try := 0; try <= txRetries; try++ {
		if err = pgx.BeginFunc(ctx, s.pool, fn); err == nil || !rolledBack(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// txRetries is how many more times inTx runs a transaction the database
// rolled back whole (retryRolledBack's bound for batches).
const txRetries = 3

// inTxOnce is inTx without its retry: for an fn with an effect outside the
// transaction (RotateWebhookSecretShown hands the new secret to its caller
// before the commit), whose error must be the caller's to act on.
func (s *Store) inTxOnce(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
