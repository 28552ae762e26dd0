package store

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Listener fans out job changes to in-process subscribers, found by job id. A
// change made by this process is published in memory (Publish) the moment it
// commits; the NotifyChannel announcements of one dedicated database connection
// carry changes made by other replicas. When the connection drops, every
// subscriber is woken (it re-reads the job), then the listener reconnects.
// A connection that dies silently (a network partition, a NAT or firewall
// that dropped the idle flow, a frozen database host: no FIN or RST arrives)
// would otherwise go unnoticed until TCP keepalive gives up, minutes later, so
// a listener that has received nothing for a while checks its connection with
// a round trip and takes it for dropped when no answer comes (SetLiveness).
//
// A subscriber receives the job's new state when the announcement carries it,
// and "" when it must read the job to know.
type Listener struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	mu    sync.Mutex
	subs  map[string]map[chan string]struct{}
	jobs  map[string]*Job // final jobs published with PublishJob, while subscribed
	ready chan struct{}
	// skip is the origin whose notifications are not delivered: its wins are
	// announced in memory (SkipNotificationsOf).
	skip string
	// checkAfter and timeout: see SetLiveness.
	checkAfter, timeout time.Duration
	// keyRevoked and keysMissed: see OnAPIKeyRevoked.
	keyRevoked func(hash [32]byte)
	keysMissed func()
}

// OnAPIKeyRevoked has the listener also LISTEN on APIKeyRevokedChannel: each
// revocation, or creation, announced there is handed to revoked (the key's
// HashAPIKey: its cached answer is stale),
// and missed is called each time the listener (re)issues its LISTEN — before
// Ready is closed the first time —, as revocations announced while it was
// not listening reached no one. The auth cache forgets the key, or
// everything. Call it before Run; both run on the listener's goroutine and
// must be quick.
func (l *Listener) OnAPIKeyRevoked(revoked func(hash [32]byte), missed func()) {
	l.keyRevoked, l.keysMissed = revoked, missed
}

// The listener's liveness defaults (SetLiveness). A quiet connection costs
// one empty round trip every 15 s; a dead one is found within 20 s, which is
// longer than a waiter's own periodic re-read (api.Config.RecheckEvery, 5 s),
// so an outage costs cross-replica waiters promptness, never an answer.
const (
	defaultListenerCheckAfter = 15 * time.Second
	defaultListenerTimeout    = 5 * time.Second
)

// NewListener makes a listener (log nil: no log); Run starts it.
func NewListener(pool *pgxpool.Pool, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Listener{pool: pool, log: log, subs: map[string]map[chan string]struct{}{}, jobs: map[string]*Job{},
		ready: make(chan struct{}), checkAfter: defaultListenerCheckAfter, timeout: defaultListenerTimeout}
}

// SetLiveness sets how long the listener waits with nothing received before
// it checks its connection with an empty round trip (checkAfter, default
// 15 s), and how long that round trip may take before the connection is
// taken for dead (timeout, default 5 s). Taking a connection and issuing
// LISTEN, when it (re)connects, has the same timeout: the pool's idle
// connections may have died silently too. Zero keeps the default. Call it
// before Run.
func (l *Listener) SetLiveness(checkAfter, timeout time.Duration) {
	if checkAfter > 0 {
		l.checkAfter = checkAfter
	}
	if timeout > 0 {
		l.timeout = timeout
	}
}

// SkipNotificationsOf pairs the listener with the store that this process's
// runner wins jobs through: the notifications of that store's batched wins are
// not delivered, because the runner announces each of them here in memory
// (Publish or PublishJob) as soon as it learns of it — otherwise the
// notification could overtake the in-memory announcement and a waiter would
// read back a job it was about to be handed. Call it before Run, only when the
// runner that uses st publishes on this listener. The skip is per Store: two
// runners sharing one Store (tests that play several replicas on one
// database) must not pair their listeners with it, or each would miss the
// other's wins.
func (l *Listener) SkipNotificationsOf(st *Store) { l.skip = st.origin }

// Ready is closed once the listener has issued its first LISTEN.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Subscribe returns a channel that receives the job's state (or "", see
// Listener) whenever jobID changes, and a function to unsubscribe. Values are
// coalesced: a subscriber that is behind sees the latest one.
func (l *Listener) Subscribe(jobID string) (<-chan string, func()) {
	ch := make(chan string, 1)
	l.mu.Lock()
	if l.subs[jobID] == nil {
		l.subs[jobID] = map[chan string]struct{}{}
	}
	l.subs[jobID][ch] = struct{}{}
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		delete(l.subs[jobID], ch)
		if len(l.subs[jobID]) == 0 {
			delete(l.subs, jobID)
			delete(l.jobs, jobID)
		}
		l.mu.Unlock()
	}
}

// Publish tells this process's subscribers that jobID changed to state (""
// when not known). It is how a change committed here reaches a waiter here
// without a database round trip; other replicas learn of it by NOTIFY.
func (l *Listener) Publish(jobID, state string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.subs[jobID] {
		send(ch, state)
	}
}

// PublishJob is Publish of a job that reached a final state (succeeded,
// cancelled) on this replica, with the whole job as that change committed it:
// a subscriber that receives the state finds the job with Job and need not read
// it. job must be complete (attempts and race events) and is never modified
// afterwards; subscribers share it.
func (l *Listener) PublishJob(job *Job) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.subs[job.ID]) > 0 && FinalState(job.State) != "" {
		l.jobs[job.ID] = job
	}
	for ch := range l.subs[job.ID] {
		send(ch, job.State)
	}
}

// Job returns the job published with PublishJob while the caller was
// subscribed to it, or nil (changes by another replica, or published without
// the job): then read it. The job is shared: do not modify it.
func (l *Listener) Job(jobID string) *Job {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.jobs[jobID]
}

// wakeAll wakes every subscriber without a state: they may have missed a
// change.
func (l *Listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, set := range l.subs {
		for ch := range set {
			send(ch, "")
		}
	}
}

// send delivers v, replacing an unread older value — except an unread ""
// with a state that is not final: "" tells a waiter to read the job and to
// watch it (this replica let it go, or the listener reconnected), which a
// later "running" from another replica must not take from it (the waiter
// would read the job but not flag it watched, and learn of another
// replica's win only at its next re-check). A final state replaces it: the
// waiter has its answer.
func send(ch chan string, v string) {
	for {
		select {
		case ch <- v:
			return
		default:
		}
		select {
		case old := <-ch:
			if old == "" && FinalState(v) == "" {
				v = ""
			}
		default:
		}
	}
}

// parsePayload splits a NotifyChannel payload: "<job id>", "<job id>:<state>"
// or "<job id>:<state>:<origin>".
func parsePayload(p string) (jobID, state, origin string) {
	id, rest, _ := strings.Cut(p, ":")
	st, origin, _ := strings.Cut(rest, ":")
	return id, st, origin
}

// Run listens until ctx ends.
func (l *Listener) Run(ctx context.Context) {
	var once sync.Once
	lost := false
	listening := func() {
		once.Do(func() { close(l.ready) })
		if lost {
			l.log.Info("job notification listener reconnected")
			lost = false
		}
	}
	for ctx.Err() == nil {
		err := l.listenOnce(ctx, listening)
		if ctx.Err() != nil {
			return
		}
		lost = true
		l.log.Warn("job notification listener lost its connection; reconnecting", "err", err)
		l.wakeAll() // waiters re-read: they may have missed a notification
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (l *Listener) listenOnce(ctx context.Context, listening func()) error {
	pc, err := l.connect(ctx)
	if err != nil {
		return err
	}
	defer l.close(ctx, pc)
	if l.keysMissed != nil {
		l.keysMissed() // revocations announced before this LISTEN reached no one
	}
	listening()
	l.wakeAll() // waiters re-read: a change announced before this LISTEN reached no one
	for {
		n, err := l.next(ctx, pc)
		if err != nil {
			return err
		}
		if n.Channel == APIKeyRevokedChannel {
			l.apiKeyRevoked(n.Payload)
			continue
		}
		id, state, origin := parsePayload(n.Payload)
		if origin != "" && origin == l.skip {
			continue // announced in memory by this process's runner
		}
		l.Publish(id, state)
	}
}

// connect takes a connection out of the pool and issues LISTEN on it, within
// the liveness timeout: the pool may hand over an idle connection that died
// silently too, and its health check (a ping) or the LISTEN would then wait
// without limit.
func (l *Listener) connect(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	conn, err := l.pool.Acquire(cctx)
	if err != nil {
		return nil, fmt.Errorf("take a connection for LISTEN: %w", err)
	}
	// The connection carries LISTEN state: never give it back to the pool.
	pc := conn.Hijack()
	listen := "LISTEN " + pgx.Identifier{NotifyChannel}.Sanitize()
	if l.keyRevoked != nil {
		listen += "; LISTEN " + pgx.Identifier{APIKeyRevokedChannel}.Sanitize()
	}
	if _, err := pc.Exec(cctx, listen); err != nil {
		l.close(ctx, pc)
		return nil, fmt.Errorf("LISTEN: %w", err)
	}
	return pc, nil
}

// apiKeyRevoked hands a revocation's payload (the key's hash in hex) to
// keyRevoked; a payload that is not one is taken for a missed revocation.
func (l *Listener) apiKeyRevoked(payload string) {
	var h [32]byte
	if b, err := hex.DecodeString(payload); err == nil && len(b) == len(h) {
		copy(h[:], b)
		l.keyRevoked(h)
		return
	}
	l.log.Warn("unexpected API key revocation payload: forgetting every cached key", "payload", payload)
	if l.keysMissed != nil {
		l.keysMissed()
	}
}

// close closes the listener's connection, waiting at most the liveness
// timeout: saying goodbye on a connection that died silently would wait
// without limit.
func (l *Listener) close(ctx context.Context, pc *pgx.Conn) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
	defer cancel()
	_ = pc.Close(cctx)
}

// next returns the connection's next notification. Whenever checkAfter
// passes with nothing received, it sends an empty round trip first: an
// answer proves the connection alive (a notification arriving meanwhile is
// kept by pgx for the next wait); none within the timeout is an error, and
// the listener reconnects.
func (l *Listener) next(ctx context.Context, pc *pgx.Conn) (*pgconn.Notification, error) {
	for {
		wctx, cancel := context.WithTimeout(ctx, l.checkAfter)
		n, err := pc.WaitForNotification(wctx)
		quiet := wctx.Err() == context.DeadlineExceeded
		cancel()
		switch {
		case n != nil:
			return n, nil // an error with it, if any, comes back from the next wait
		case err == nil:
			continue // handled by an OnNotification set in the pool's ConnConfig: nothing to deliver
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case !quiet || pc.IsClosed():
			return nil, err
		}
		// Quiet for checkAfter. The wait's timeout left the connection
		// usable (pgx closes a connection only on errors other than
		// timeouts); ask the server whether it is still there.
		pctx, cancel := context.WithTimeout(ctx, l.timeout)
		err = pc.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("connection silent for %s and no answer to a ping within %s: %w",
				l.checkAfter, l.timeout, err)
		}
	}
}
