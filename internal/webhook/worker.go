package webhook

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/riverqueue/river"

	"github.com/routerhq/router/internal/netredact"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// DeliverArgs is the River job that delivers one event. The jobs_outbox
// trigger inserts it (kind webhook_delivery, queue webhooks) with SQL.
type DeliverArgs struct {
	EventID string `json:"event_id"`
	// Owner is the event's owner, written by the outbox since migration
	// 0026: a delivery over its owner's limit is snoozed without reading the
	// event. Empty in a job queued before it: the event is read first.
	Owner string `json:"owner,omitempty"`
}

// Kind implements river.JobArgs.
func (DeliverArgs) Kind() string { return "webhook_delivery" }

// Queue is the River queue deliveries run in.
const Queue = "webhooks"

// Store is what the worker reads and writes.
type Store interface {
	// ClaimEventForDelivery reads the event to deliver and, in the same
	// statement, claims its send lease for claim (none for a claim without
	// a token): store.SendClaim.
	ClaimEventForDelivery(ctx context.Context, id string, claim store.SendClaim) (*store.Event, *store.Webhook, *store.Job, error)
	FreezeEventBody(ctx context.Context, id string, body []byte) ([]byte, error)
	// RecordDelivery returns the event's stored status after the write,
	// which is not d.Status when the event had ended before (another try of
	// it delivered it, or gave up on it).
	RecordDelivery(ctx context.Context, d store.DeliveryTry) (status string, err error)
	// ReleaseSendLease frees the event's send lease if the try with token
	// still holds it: for a try that failed before its send started.
	ReleaseSendLease(ctx context.Context, id, token string) error
}

var _ Store = (*store.Store)(nil)

// Config tunes deliveries.
type Config struct {
	Timeout          time.Duration // one try, connection to last byte; default 10s
	MaxResponseBytes int64         // response body bytes read (and then ignored); default 64 KiB; headers: maxResponseHeaderBytes
	RetryFor         time.Duration // retry until the event is this old on the database clock; default 24h
	// Secrets are the configured owners' secrets (api_keys[].webhook.secret_env);
	// stored keys' secrets come from the database.
	Secrets map[string]string
	// PreviousSecrets are the configured owners' secrets being rotated out
	// (api_keys[].webhook.previous_secret_env): a delivery to such an owner
	// carries a second signature, with it.
	PreviousSecrets map[string]string
	// Client sends the requests; default an http.Client that does not follow
	// redirects (a 3xx is a failed try), keeps an idle connection per
	// worker to each endpoint and reads an answer's headers up to
	// maxResponseHeaderBytes (newHTTPClient). Service.Stop closes its idle
	// connections.
	Client *http.Client
	// Now is the process clock. A try's times are on the database's clock
	// (tryClock): the database's now() read with the event, advanced by the
	// time Now says has passed since the read. So the try's webhook-timestamp
	// and recorded start are the database's time, whatever Now's offset
	// from it; Now measures durations only, and decides no expiry (see
	// RetryFor).
	Now func() time.Time
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = 64 << 10
	}
	if c.RetryFor <= 0 {
		c.RetryFor = 24 * time.Hour
	}
	if c.Client == nil {
		c.Client = newHTTPClient(DefaultWorkers)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Worker delivers events. River runs one job at a time per row (the row is
// locked as running), and Timeout keeps a try far below River's stuck-job
// rescue; but River decides a try is stuck on its leader's clock, so the
// send itself is fenced in the database: a try sends only while it holds
// its event's send lease (store.SendClaim), and one event is never delivered
// twice at once, whatever the replicas' clocks (see sendLease for what is
// still not covered).
type Worker struct {
	river.WorkerDefaults[DeliverArgs]
	store   Store
	cfg     Config
	backoff Backoff // the waits River's retry policy draws; see Work's snooze
	// hints is what the worker tells River's retry policy (backoff.hints):
	// the database clock's offset from this process's, and a receiver's
	// Retry-After for the retry River schedules next.
	hints *retryHints
	// stopping is set by Service.Stop: a try whose context is cancelled
	// then was cut by the shutdown, not by its endpoint.
	stopping atomic.Bool
	owners   ownerSlots   // each owner's tries in flight; no limit unless NewService sets one
	paused   ownerPauses  // owners whose endpoint asked for a pause (Retry-After on a 429 or 503)
	log      *slog.Logger // failed tries (info) and abandoned events (warn)
	observer Observer     // optional
	// unusablePrevious remembers the previous secrets found unable to sign
	// (warnUnusablePrevious), each logged once per owner.
	unusablePrevious sync.Map
}

// Observer counts the outcome of each recorded try (metrics.Webhooks
// implements it): OutcomeDelivered, OutcomeFailed (to be retried) or
// OutcomeAbandoned (the try that gave up on its event). A try cut short by
// the replica's shutdown is not counted: it is no failure of the endpoint.
type Observer interface {
	DeliveryTry(outcome string)
}

// The outcomes an Observer is told of.
const (
	OutcomeDelivered = "delivered"
	OutcomeFailed    = "failed"
	OutcomeAbandoned = "abandoned"
)

// ownerSlots bounds the deliveries of each owner in flight on this replica
// (ServiceConfig.MaxInflightPerOwner); a limit of 0 bounds nothing. It also
// keeps a reserve of the replica's workers for owners with no delivery in
// flight (ownerReserve): an owner that already has one may take another only
// while fewer than shared are in flight in all. The per-owner limit alone let
// a few owners whose endpoints hang hold every worker between them (4 × 25 of
// 100), and every other owner's events wait behind them for webhooks.timeout
// per try; with the reserve, an owner with nothing in flight finds a worker
// unless every slot of the reserve is held, each by another owner. Both bounds are this
// replica's scheduling, kept in memory: no database guarantee rests on them.
type ownerSlots struct {
	limit   int
	shared  int // slots an owner with a delivery in flight may take, in all; 0: no reserve
	mu      sync.Mutex
	n       map[string]int
	total   int                  // the sum of n
	moved   map[string]time.Time // when the owner's deliveries last made way: one started on free slots, or one ended
	backlog                      // the deliveries this replica snoozed, per owner: see ownerbacklog.go
}

// Bounds of the wait of a delivery whose owner has no free slot.
const (
	ownerBusyMin = 250 * time.Millisecond
	ownerBusyMax = 30 * time.Second
)

// acquire takes one of owner's slots at now, or says there is none free (the
// owner is at its limit, or has a delivery in flight while only the reserve
// is left) and how long the delivery should wait before it looks again: as
// long as the owner's deliveries have gone without making way (no slot
// freed), between ownerBusyMin and ownerBusyMax, jittered up to twice that
// so that the owner's waiting deliveries come back spread out. An endpoint that answers
// frees a slot every moment, and its waiting deliveries look again within a
// fraction of a second; one that does not answer holds its slots for
// webhooks.timeout, and its backlog looks again every few seconds rather
// than costing a read and an update per waiting event every second.
func (s *ownerSlots) acquire(owner string, now time.Time) (ok bool, wait time.Duration) {
	if s.limit <= 0 {
		return true, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.n[owner]; n >= s.limit || n > 0 && s.shared > 0 && s.total >= s.shared {
		// Refused by the reserve, the owner waits as at its limit: the
		// reserve frees when any delivery ends, but the owner's own one
		// ending gives it a slot at once, and how soon that comes is what
		// its progress tells.
		wait = min(max(now.Sub(s.moved[owner]), ownerBusyMin), ownerBusyMax)
		return false, wait + rand.N(wait)
	}
	if s.n == nil {
		s.n, s.moved = map[string]int{}, map[string]time.Time{}
	}
	if s.n[owner] == 0 {
		s.moved[owner] = now
	}
	s.n[owner]++
	s.total++
	return true, 0
}

// release gives back, at now, a slot acquire took.
func (s *ownerSlots) release(owner string, now time.Time) {
	if s.limit <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.moved[owner] = now
	s.total--
	if s.n[owner]--; s.n[owner] <= 0 {
		delete(s.n, owner)
		delete(s.moved, owner)
	}
}

var _ river.Worker[DeliverArgs] = (*Worker)(nil)

// NewWorker builds the delivery worker.
func NewWorker(st Store, cfg Config) *Worker {
	w := &Worker{store: st, cfg: cfg.WithDefaults(), hints: &retryHints{}, log: slog.New(slog.DiscardHandler)}
	w.setBackoff(Backoff{})
	return w
}

// setBackoff makes b (with its defaults) the worker's retry policy, told of
// the worker's hints.
func (w *Worker) setBackoff(b Backoff) {
	w.backoff = b.withDefaults()
	w.backoff.hints = w.hints
}

// Timeout implements river.Worker: the try's own timeout plus time for the
// reads and the body's freeze around it. The record of the try runs apart
// from this context, bounded by recordTimeout.
func (w *Worker) Timeout(*river.Job[DeliverArgs]) time.Duration {
	return w.cfg.Timeout + 10*time.Second
}

// recordTimeout bounds the wait for the write of a try's outcome
// (RecordDelivery). The write is kept apart from the job's context, so that a
// try cut short by the shutdown or by the job's timeout is still recorded;
// without a limit of its own, though, a write stalled past River's
// RescueStuckJobsAfter would let River rescue the job while this worker still
// runs it, and deliver the event a second time at once. A live worker thus
// returns within its job's timeout (Timeout) plus recordTimeout, well inside
// the rescue (rescueStuckAfter), and within its send lease (sendLease), which
// allows for both. When the limit passes the try's job fails and River
// retries it, which delivers the event again unless the write landed
// meanwhile: a repeat, as after a crash, but never a concurrent one (the
// retry waits for the lease the unrecorded try still holds).
const recordTimeout = 5 * time.Second

// Work implements river.Worker: one delivery try. An error asks River for a
// retry (see Backoff); river.JobCancel ends the retries.
//
// No error of the attempt before River's last, or of the last, reaches
// River: River discards a job that fails at its last attempt, and its
// rescuer one it finds stuck at it, leaving the event pending with nothing
// to deliver it, though the retry window is a time (webhooks.retry_for on
// the event's age), not a count (a failed read or record does not even
// record a try). Such an error is a snooze instead, as long as a retry would
// wait: a snooze puts the attempt back, so once there the job runs at
// attempt max_attempts-1, and River's rescuer, which discards a job stuck at
// its last attempt, retries it instead, at the last attempt, whose error is
// a snooze again. Only two tries in a row lost with their replica at that
// edge lose the event.
func (w *Worker) Work(ctx context.Context, job *river.Job[DeliverArgs]) error {
	err := w.workOrSnooze(ctx, job)
	var snoozed *river.JobSnoozeError
	var cancelled *river.JobCancelError
	switch {
	case err == nil || job.JobRow == nil || errors.As(err, &snoozed) || errors.As(err, &cancelled):
	case w.stopping.Load() && errors.Is(err, context.Canceled):
		// Cut by the shutdown: River makes the job available again without
		// asking for a retry.
	default:
		// A failed try: River's executor asks NextRetry for it next, and no
		// clock (the database's offset unmeasured before a read returned)
		// makes it a rescue (Backoff.rescued).
		w.hints.noteFailed(job.ID)
	}
	return err
}

// workOrSnooze is Work's try (work), its error a snooze at River's last
// attempts.
func (w *Worker) workOrSnooze(ctx context.Context, job *river.Job[DeliverArgs]) error {
	err := w.work(ctx, job)
	if err == nil || job.JobRow == nil || job.MaxAttempts <= 0 || job.Attempt < job.MaxAttempts-1 {
		return err
	}
	var snoozed *river.JobSnoozeError
	var cancelled *river.JobCancelError
	if errors.As(err, &snoozed) || errors.As(err, &cancelled) {
		return err
	}
	wait := w.backoff.Delay(max(job.Attempt, 1))
	if after := w.hints.takeRetryAfter(job.ID); after > wait {
		wait = spreadWait(after)
	}
	w.log.Info("webhook delivery try failed at River's last attempts; snoozed instead of retried, which River would discard",
		"event_id", job.Args.EventID, "river_job_id", job.ID, "attempt", job.Attempt, "error", err.Error(), "wait", wait)
	return w.snooze(wait)
}

// snooze is river.JobSnooze for a wait on the database clock: River adds the
// duration to its own clock (time.Now() when it reports the job), so the
// database clock's offset from this process's (retryHints) is added to it,
// and a replica whose clock is behind the database's does not schedule the
// job in the past (every fetch then took it again at once), nor one ahead in
// the future. A wait shorter than a replica's lead cannot be scheduled
// before River's clock: the job is then due at once by River's clock, a
// little later by the database's (River v0.51 takes a snooze's duration
// only, never a time).
func (w *Worker) snooze(wait time.Duration) error {
	return river.JobSnooze(max(0, wait+w.hints.offset()))
}

// sendLeaseMargin is the time beyond a try's own bounds that its send lease
// lasts (sendLease).
const sendLeaseMargin = 5 * time.Second

// sendLease is how long a try's send lease (store.SendClaim) lasts from its
// claim, on the database clock: longer than a live try can still run after
// it, its job's timeout (Timeout, which began before the claim) then the
// record of the try (recordTimeout), plus sendLeaseMargin. The try's record
// clears it. Still not covered: a process paused (SIGSTOP, swapped out, a
// VM migrated, a starved scheduler) between its claim and the end of its
// send for longer than the lease, on the database clock. Another try claims
// the expired lease and sends, and the paused one, resumed, may make or
// finish its request beside it before its own timers act: nothing in the
// database can stop a request the process has already decided to make. The
// lease takes the replicas' clocks out of the question, not a paused
// process.
func (w *Worker) sendLease() time.Duration {
	return w.Timeout(nil) + recordTimeout + sendLeaseMargin
}

// leaseBusyWait is the least wait of a try that found its event's send lease
// held by another try, or could not claim it for a moment (the event's row
// was being written).
const leaseBusyWait = time.Second

// newSendToken is a try's own token for its send lease.
func newSendToken() string {
	var b [16]byte
	_, _ = crand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

func (w *Worker) work(ctx context.Context, job *river.Job[DeliverArgs]) error {
	var riverID int64
	if job.JobRow != nil {
		riverID = job.ID
	}
	turned := w.owners.back(riverID) // no longer one of its owner's waiting deliveries
	// The owner's slot is taken before the event is read (and its send
	// lease claimed) when the job's args name the owner (the outbox writes
	// it, migration 0026): a delivery over the owner's limit then costs
	// River's fetch and snooze, no read (and a try that finds no webhook or
	// no secret holds a slot for the moment it takes). One queued before,
	// without the owner, reads the event first, claiming nothing, to learn
	// it.
	//
	// The owner's deliveries in flight on this replica are bounded, so
	// that an endpoint that does not answer holds a few workers, not
	// all of them, and a reserve of the workers is left to owners with
	// nothing in flight, so that a few such endpoints together do not
	// hold them all (ownerSlots). Over either bound the delivery waits
	// its turn: River's snooze makes the job available again later,
	// with its attempt count restored (River v0.51: JobSetStateSnoozed
	// puts back attempt-1, leaves max_attempts and the errors alone), so
	// a snooze is neither a try (none is recorded) nor an attempt (none is
	// counted against max_attempts, nor lengthens the backoff); and
	// only a try that failed gives up on an event. The wait is the
	// delivery's turn among the owner's waiting on this replica
	// (ownerSlots.snooze), so that an owner's backlog costs about as
	// many of River's fetches a second as its slots free (plus at most
	// 4 × its limit for a parked backlog), whatever its size, and does
	// not crowd other owners' events out of them.
	owner := job.Args.Owner
	if owner == "" {
		ev, _, _, err := w.store.ClaimEventForDelivery(ctx, job.Args.EventID, store.SendClaim{})
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil // deleted by retention
		case err != nil:
			return fmt.Errorf("read event: %w", err)
		case ev.Status != store.EventPending:
			return nil
		}
		w.hints.noteClock(ev.DBNow, w.backoff.now())
		owner = ev.Owner
	}
	// An owner whose endpoint asked for a pause (ownerPauses) gets nothing
	// before it ends: the delivery is snoozed to its turn after the pause
	// (ownerSlots.hold), neither a try nor an attempt, unless its event is
	// webhooks.retry_for old: then it is abandoned, nothing sent
	// (abandonHeld). A delivery over its owner's limit is snoozed to its
	// turn unless its event is lastLook old: then it is abandoned, nothing
	// sent (abandonBusy). Neither snooze ends after the event is lastLook
	// old (capWait), so that every event ends delivered or abandoned within
	// the redelivery window retention keeps its job for.
	now := w.cfg.Now()
	if until, held := w.paused.held(owner, now); held {
		hold := func() time.Duration { return w.owners.hold(owner, riverID, now, until) }
		if w.heldPastRetryFor(job) {
			return w.abandonHeld(ctx, job, hold)
		}
		return w.snoozeTurn(job, hold())
	}
	end, wait := w.owners.admit(owner, riverID, turned)
	if end == nil {
		if w.busyPastLastLook(job) {
			return w.abandonBusy(ctx, job, wait)
		}
		return w.snoozeTurn(job, wait)
	}
	defer end()
	claim := store.SendClaim{Token: newSendToken(), For: w.sendLease()}
	ev, wh, j, err := w.readEvent(ctx, job.Args.EventID, claim)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted by retention
	}
	if err != nil {
		// The read's claim may have committed before it failed (the read
		// runs more than one statement, and read again, claims again).
		w.releaseLease(ctx, job.Args.EventID, claim)
		return fmt.Errorf("read event: %w", err)
	}
	clock := newTryClock(ev.DBNow, w.cfg.Now)
	w.hints.noteClock(ev.DBNow, w.backoff.now())
	if ev.Status != store.EventPending {
		return nil
	}
	if !ev.SendLease.Held {
		// Another try of the event is sending it (River ran the job again,
		// its rescuer taking the first try for stuck), or its record has
		// not landed: this one sends nothing, records nothing, and looks
		// again when that try's lease ends, on the database clock. The
		// event is then delivered, or free to be tried again.
		return w.snooze(max(ev.SendLease.Left, leaseBusyWait))
	}
	try := store.DeliveryTry{EventID: ev.ID, Try: ev.Tries + 1, StartedAt: clock.now(), Sender: claim.Token}
	keys := signingKeys{owner: ev.Owner}
	if wh != nil {
		try.URL = wh.URL
		keys.secret, keys.previous, keys.stored = wh.Secret, wh.PreviousSecret, true
		if keys.secret == "" {
			keys.secret, keys.previous, keys.stored = w.cfg.Secrets[ev.Owner], w.cfg.PreviousSecrets[ev.Owner], false
		}
	}
	var code int
	var sendErr error
	switch {
	case wh == nil:
		// Each replica rewrites the configured webhooks at start
		// (SyncConfigWebhooks): during a rolling update a replica restarted
		// with the old configuration removes the webhook a newer one added.
		// A failed try, not an abandoned event, as for errNoSecret: a
		// replica with the newer configuration restores the webhook within
		// the retry window. A webhook removed on purpose has its events
		// abandoned once the window has passed.
		sendErr = errNoWebhook
		if r := ev.RemovedWebhook; r != nil {
			// The removed configured webhook keeps its place: a key made
			// with --webhook-url does not take the owner, and a new one is
			// refused, until its window ends or forget-removed-webhook.
			sendErr = &removedWebhookError{owner: ev.Owner, removal: *r}
		}
	case keys.secret == "":
		// The webhook is configured (api_keys[].webhook) on the replica that
		// synced it, but this replica has no secret for it: its configuration
		// or environment differs (a rolling update). A failed try, not an
		// abandoned event: another replica, or this one restarted with the
		// variable set, delivers it within the retry window.
		sendErr = errNoSecret
	default:
		if err := w.unsent(ctx, ev.ID, claim); err != nil {
			return err
		}
		body := ev.Body
		if body == nil { // then readEvent read the job to make it from
			if body, err = w.store.FreezeEventBody(ctx, ev.ID, eventBody(ev.Type, j)); err != nil {
				w.releaseLease(ctx, ev.ID, claim) // nothing was sent
				return fmt.Errorf("store event body: %w", err)
			}
			if err := w.unsent(ctx, ev.ID, claim); err != nil {
				return err
			}
		}
		code, sendErr = w.send(ctx, clock, wh.URL, keys, ev.ID, idempotencyKey(ev.ID, try.Try, claim.Token), body)
		var ra *retryAfterError
		if errors.As(sendErr, &ra) {
			// Every delivery of the owner waits, not only this event's
			// retry: the endpoint asked for nothing before then.
			w.paused.pause(ev.Owner, w.cfg.Now(), ra.after)
		}
	}
	try.Latency, try.StatusCode = clock.now().Sub(try.StartedAt), code
	try.Status = store.EventDelivered
	var interrupted *interruptedError
	var gone *goneError
	switch {
	case errors.As(sendErr, &interrupted):
		// The endpoint did not fail: the try is recorded as cut short and
		// never gives up on the event, whatever its age; the next try decides.
		try.Error, try.Status = sendErr.Error(), store.EventPending
	case errors.As(sendErr, &gone):
		// The receiver says the endpoint is gone (410): retrying it for
		// webhooks.retry_for only repeats the answer, so this event is
		// abandoned at once. The owner's webhook is left as it is: its other
		// events are sent, and each that is answered 410 is abandoned the
		// same way, at its first 410.
		try.Error, try.Status = sendErr.Error(), store.EventAbandoned
	case sendErr != nil:
		try.Error, try.Status = sendErr.Error(), store.EventPending
		// ev.Age is measured by PostgreSQL: expiry is decided on the
		// database clock, so replicas with skewed clocks agree.
		if ev.Age >= w.cfg.RetryFor {
			try.Status = store.EventAbandoned
			var removed *removedWebhookError
			switch {
			case sendErr == errNoWebhook:
				try.Error = fmt.Sprintf("abandoned: the event is older than webhooks.retry_for (%s) and %s", w.cfg.RetryFor, noWebhookWhy)
			case errors.As(sendErr, &removed):
				try.Error = fmt.Sprintf("abandoned: the event is older than webhooks.retry_for (%s) and %s", w.cfg.RetryFor, removed.why())
			case sendErr == errNoSecret:
				try.Error = fmt.Sprintf("abandoned: the event is older than webhooks.retry_for (%s), and %s", w.cfg.RetryFor, noSecretWhy)
			}
		}
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	status, err := w.store.RecordDelivery(rctx, try)
	cancel()
	if err != nil {
		return fmt.Errorf("record delivery: %w", err)
	}
	// The stored status, not the try's own: a try of the event that ran
	// beside this one (a rescued delivery beside the stuck one) may have
	// ended it first, and the event keeps the end it was recorded with.
	w.tell(ev, job, try, status, interrupted != nil)
	switch {
	case status == store.EventDelivered || status == store.EventAbandoned && sendErr == nil:
		return nil // nothing is left to retry
	case status == store.EventAbandoned:
		if try.Error != sendErr.Error() { // no webhook or no secret: it said "will be retried"
			return river.JobCancel(errors.New(try.Error))
		}
		if gone != nil {
			return river.JobCancel(sendErr)
		}
		return river.JobCancel(fmt.Errorf("gave up after %s: %w", w.cfg.RetryFor, sendErr))
	case interrupted != nil:
		// River makes a job its stopping client cut short available again
		// without counting the attempt (interruptedError.Unwrap), so the
		// backoff does not grow either.
		return sendErr
	case sendErr != nil:
		// A receiver that asked for a wait (Retry-After on a 429 or 503)
		// gets at least that: River's retry policy draws its backoff and
		// takes the longer (Backoff.NextRetry). The retry is still a try
		// like any other: the event is given up on by its age, so the wait
		// does not lengthen webhooks.retry_for.
		var ra *retryAfterError
		if errors.As(sendErr, &ra) && job.JobRow != nil {
			w.hints.setRetryAfter(job.ID, ra.after)
		}
		return sendErr
	}
	return nil
}

// unsent says whether the try's context ended before its request was sent,
// and then releases its send lease and returns the error that has River retry
// the delivery, with no try recorded: the read of the event (batched with
// others' reads, store.group, whose batch is bounded by its own timeout, not
// the caller's context) or the freeze of its body can come back after the
// job's time (Timeout) ran out, and the send that failed at once was
// recorded as the endpoint's failure, "no answer within 10s", though no
// request was made.
func (w *Worker) unsent(ctx context.Context, id string, claim store.SendClaim) error {
	if ctx.Err() == nil {
		return nil
	}
	w.releaseLease(ctx, id, claim)
	return &unsentError{err: ctx.Err(), cause: context.Cause(ctx), stopping: w.stopping.Load(), timeout: w.Timeout(nil)}
}

// unsentError is a try whose context ended before its request was sent
// (unsent): no try is recorded.
type unsentError struct {
	err, cause error
	stopping   bool
	timeout    time.Duration // the job's (Worker.Timeout)
}

func (e *unsentError) Error() string {
	switch {
	case e.stopping:
		return "delivery stopped by router shutdown before its request was sent; no try is recorded; will be retried"
	case errors.Is(e.cause, context.DeadlineExceeded):
		return fmt.Sprintf("the delivery job's time (%s) ran out before its request was sent: reading the event or storing its body "+
			"took that long (a slow database); nothing was sent and no try is recorded; will be retried", e.timeout)
	default:
		return fmt.Sprintf("delivery cancelled before its request was sent (%v); nothing was sent and no try is recorded; will be retried", e.cause)
	}
}

// Unwrap gives River the context's error and cause, as interruptedError's
// does: a job its stopping client cut short is made available again with its
// attempt not counted.
func (e *unsentError) Unwrap() []error { return []error{e.err, e.cause} }

// releaseTimeout bounds the release of a send lease (releaseLease). Shorter
// than recordTimeout, the release of a try that records nothing keeps the
// try within the bounds its lease allows for (sendLease).
const releaseTimeout = 2 * time.Second

// releaseLease frees the send lease claim took on event id, for a try that
// returns before its send started and records nothing: only the record of a
// try frees its lease otherwise, and the event's next try (River's retry,
// due within a second or so) found it held and waited for it to run out,
// webhooks.timeout and more, for nothing. It frees only the try's own lease
// (store.ReleaseSendLease), apart from the try's context (a try cut short
// still releases) and within releaseTimeout; a failed release is logged,
// and the lease then runs out as before. A try whose send may have started
// keeps its lease, whatever becomes of its record: the lease fences that
// send. Only these error paths pay the release's round trip.
func (w *Worker) releaseLease(ctx context.Context, id string, claim store.SendClaim) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := w.store.ReleaseSendLease(rctx, id, claim.Token); err != nil {
		w.log.Info("webhook delivery try failed before sending and could not release its send lease; the event's next try waits for it to run out",
			"event_id", id, "lease", w.sendLease(), "error", err.Error())
	}
}

// readEvent reads the event to deliver (Store.ClaimEventForDelivery, which
// claims its send lease for claim; read again, it claims it again, as its
// own) with its
// owner's webhook and, while the event has no stored body, the job to make the
// body from. The read's statements run one after another, each seeing what
// was committed when it began: a body that another try of the event (a
// rescued delivery beside the stuck one) freezes between the first statement
// and the next leaves the read with neither the body nor the job, as does a
// job that retention deletes between them (its events go with it). Such a
// read is done again, once: the event is then gone, or ended, or has its
// body. Taken for a deletion, it completed the River job and left the event
// pending with nothing to deliver it.
func (w *Worker) readEvent(ctx context.Context, id string, claim store.SendClaim) (*store.Event, *store.Webhook, *store.Job, error) {
	for range 2 {
		ev, wh, j, err := w.store.ClaimEventForDelivery(ctx, id, claim)
		if err != nil || ev.Status != store.EventPending || ev.Body != nil || j != nil {
			return ev, wh, j, err
		}
	}
	// Twice is more than one race of the event's tries: River retries later.
	return nil, nil, nil, fmt.Errorf("event %s has no stored body and no job to make one from, twice in a row; will be retried", id)
}

// tell logs a recorded try that failed — at info, or at warn when its event
// is abandoned — and counts its outcome (Observer). A try cut short by the
// shutdown is neither: River logs its job's interruption.
//
// Whether the try failed is the try's own (try.Status); what became of its
// event is status, the one stored after its record (RecordDelivery), which
// differs from try.Status when another try of the event ended it first. A
// failed try counts abandoned only when the stored event is, and is logged as
// to be retried only when the stored event is still pending: one that failed
// beside a try that delivered its event is neither.
func (w *Worker) tell(ev *store.Event, job *river.Job[DeliverArgs], try store.DeliveryTry, status string, interrupted bool) {
	if interrupted {
		return
	}
	outcome := OutcomeDelivered
	switch {
	case try.Status == store.EventDelivered:
	case status == store.EventAbandoned:
		outcome = OutcomeAbandoned
	default:
		outcome = OutcomeFailed
	}
	if outcome != OutcomeDelivered {
		// try.Error never holds the webhook URL (sendError) nor what an
		// answer quotes of its secret-bearing parts (answerText), whose path
		// or query is often the endpoint's credential; neither does this line.
		attrs := []any{"event_id", ev.ID, "job_id", ev.JobID, "owner", ev.Owner, "event_type", ev.Type,
			"try", try.Try, "status", try.StatusCode, "error", try.Error}
		if job != nil && job.JobRow != nil {
			attrs = append(attrs, "river_job_id", job.ID)
		}
		switch {
		case outcome == OutcomeAbandoned && try.Status == store.EventAbandoned && try.StatusCode == http.StatusGone:
			w.log.Warn("webhook event abandoned: the owner's webhook answered 410 Gone; it will not be sent again: fix or remove the owner's webhook URL",
				attrs...)
		case outcome == OutcomeAbandoned && try.Status == store.EventAbandoned && strings.HasSuffix(try.Error, heldWhy):
			w.log.Warn("webhook event abandoned: it became webhooks.retry_for old while its owner's webhook asked for a pause (Retry-After); "+
				"it was not sent and will not be", append(attrs, "retry_for", w.cfg.RetryFor)...)
		case outcome == OutcomeAbandoned && try.Status == store.EventAbandoned && strings.HasSuffix(try.Error, busyWhy):
			w.log.Warn("webhook event abandoned: its last retry's time passed while it waited for a free slot of its owner "+
				"(webhooks.max_inflight_per_owner); it was not sent and will not be: raise webhooks.max_inflight_per_owner, or make the endpoint answer faster",
				append(attrs, "retry_for", w.cfg.RetryFor, "last_look", w.lastLook())...)
		case outcome == OutcomeAbandoned:
			w.log.Warn("webhook event abandoned: a try of it failed when it was webhooks.retry_for old; it will not be sent again",
				append(attrs, "retry_for", w.cfg.RetryFor)...)
		case status == store.EventDelivered:
			w.log.Info("webhook delivery try failed; another try delivered the event", attrs...)
		default:
			w.log.Info("webhook delivery try failed; will be retried", attrs...)
		}
	}
	if w.observer != nil {
		w.observer.DeliveryTry(outcome)
	}
}

// noSecretWhy says why the last try of an abandoned event sent nothing, and
// how to mend it. Earlier tries may have been another replica's.
const noSecretWhy = "the replica of its last try had no signing secret for the owner's webhook " +
	"(set the environment variable named by api_keys[].webhook.secret_env on every replica)"

// errNoSecret is the failed try of a replica without the signing secret of a
// configured webhook.
var errNoSecret = errors.New("no signing secret for this owner's webhook on this replica: set the environment variable named by api_keys[].webhook.secret_env; will be retried")

// noWebhookWhy says why an event whose owner has no webhook is not sent, and
// how to mend it.
const noWebhookWhy = "the owner has no webhook: neither the configuration of the replica that started last " +
	"(each replica writes its api_keys[].webhook at start) nor an unrevoked key made with --webhook-url sets one; " +
	"if it was removed by mistake (a replica with an older configuration restarted during a rolling update), " +
	"restart a replica whose configuration has it; if the owner's last key made with --webhook-url was revoked, " +
	"give it one again with `router keys create --owner OWNER --webhook-url URL`"

// errNoWebhook is the failed try of an event whose owner has no webhook.
var errNoWebhook = errors.New(noWebhookWhy + "; will be retried until the event is webhooks.retry_for old, " +
	"then abandoned (as it should be if the webhook was removed on purpose)")

// errNoAnswer ends a try's context when Config.Timeout has passed.
var errNoAnswer = errors.New("no answer within the webhook timeout")

// InterruptedNote is the whole last error of a try the router's shutdown cut
// short (interruptedError): what GET /v1/jobs/{id}/events shows, and how the
// dashboard tells such a try from a failure (store.WebhookDeliveryStats).
const InterruptedNote = "delivery interrupted by router shutdown; will be retried"

// interruptedError is a try cut short by the router's shutdown: the endpoint
// may have been about to answer, so it is neither a timeout nor a failure of
// the endpoint. Its text is what GET /v1/jobs/{id}/events shows.
type interruptedError struct{ err, cause error }

func (e *interruptedError) Error() string { return InterruptedNote }

// Unwrap gives River the context's error (context.Canceled) and cause: a
// worker's error that is context.Canceled while River's stop is the job
// context's cause is how River tells a job its client stopped from a failed
// one, and makes it available again with its attempt not counted.
func (e *interruptedError) Unwrap() []error { return []error{e.err, e.cause} }

// eventBody is an event's payload, {"type": …, "job": …}: the job as the
// tenant API answers with it (race.AppendJob: store.Job.AppendJSON, the bytes
// encoding/json wrote, without reflection, and for a job.failed event's
// failed job its next_step, as GET /v1/jobs/{id} has it). j is the job as the
// event's transition left it, even when it has changed since (a failed job
// retried, an unknown one resolved): EventForDelivery reads it from the
// snapshot the outbox recorded (internal/store/eventreads.go), so
// job.version orders an owner's events. The body is made once, at the
// event's first try, and stored (FreezeEventBody): next_step costs nothing
// on the path of a job, nor on a redelivery.
func eventBody(typ string, j *store.Job) []byte {
	t, _ := json.Marshal(typ) // a string always encodes
	b := append(append(append(make([]byte, 0, 4096), `{"type":`...), t...), `,"job":`...)
	return append(race.AppendJob(b, j), '}')
}

// send POSTs one signed try; a non-2xx status, headers over
// maxResponseHeaderBytes or no answer within Timeout is an error, and so is a
// try cut short by the service stopping (interruptedError); a 410 Gone is a
// goneError, which abandons the event at once. A previous secret
// (a rotation) adds its signature after the current one's (signature). The
// webhook-timestamp is the database's time (clock): receivers refuse one
// more than a few minutes from their own clock, and a replica whose clock
// was off by that much had every try refused, counted as the endpoint's
// failure, until its events were abandoned.
func (w *Worker) send(ctx context.Context, clock tryClock, url string, keys signingKeys, id, idemKey string, body []byte) (int, error) {
	tryCtx, cancel := context.WithTimeoutCause(ctx, w.cfg.Timeout, errNoAnswer)
	defer cancel()
	ts := clock.now()
	sig, err := w.signature(keys, id, ts, body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(tryCtx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "router-webhooks/1")
	req.Header.Set(HeaderID, id)
	req.Header.Set(HeaderTimestamp, fmt.Sprint(ts.Unix()))
	req.Header.Set(HeaderSignature, sig)
	// An Idempotency-Key makes net/http send the POST again on a fresh
	// connection when a kept-alive one the receiver had just closed fails it
	// before any answer (Request.isReplayable), instead of the try failing
	// ("EOF") and waiting a backoff. It is the try's own (idempotencyKey):
	// an idempotency layer at the receiver (Stripe-style, the IETF
	// Idempotency-Key draft) keeps the first answer to a key and replays it
	// to every later request with it, and with the event id alone it
	// answered every redelivery with the first try's 500, the handler never
	// reached again until the event was abandoned. Receivers drop repeats by
	// webhook-id, the same on every try.
	req.Header.Set("Idempotency-Key", idemKey)
	resp, err := w.cfg.Client.Do(req)
	if err != nil {
		if tryCtx.Err() != nil {
			return 0, w.cutShort(tryCtx)
		}
		if headersTooLarge(err) {
			return 0, errHeadersTooLarge
		}
		return 0, &sendError{err: err}
	}
	defer resp.Body.Close()
	// A protocol switch's body (101) is the connection itself, which net/http
	// detaches from the request's context: a read of it outlived the try's
	// deadline and River's job timeout, holding the worker and the owner's
	// slot until the receiver closed it. Closing the body when the try's time
	// is up bounds every read of it.
	stop := context.AfterFunc(tryCtx, func() { _ = resp.Body.Close() })
	defer stop()
	if resp.StatusCode < 200 {
		// No answer to a webhook (net/http hands back no other 1xx): a failed
		// try, its body left unread.
		return resp.StatusCode, errors.New(AnsweredPrefix + strconv.Itoa(resp.StatusCode) + InterimNote)
	}
	answer := io.LimitReader(resp.Body, w.cfg.MaxResponseBytes)
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		_, _ = io.Copy(io.Discard, answer)
		return resp.StatusCode, nil
	}
	// The start of the answer often says what is wrong (a proxy's error
	// page, the receiver's own message): kept in the try's error.
	head, more := readAnswerHead(answer, resp.ContentLength, w.cfg.MaxResponseBytes)
	_, _ = io.Copy(io.Discard, answer)
	msg := AnsweredPrefix + strconv.Itoa(resp.StatusCode)
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		msg += RedirectNote // a 300 or 304 answers no POST, but redirects nowhere
	}
	if resp.StatusCode == http.StatusGone {
		msg += GoneNote
	}
	if text := answerText(head, more, req.URL); text != "" {
		msg += ": " + text
	}
	if resp.StatusCode == http.StatusGone {
		return resp.StatusCode, &goneError{msg: msg}
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if after, ok := retryAfter(resp.Header, clock.now()); ok {
			return resp.StatusCode, &retryAfterError{msg: msg, after: min(after, w.backoff.Cap)}
		}
	}
	return resp.StatusCode, errors.New(msg)
}

// idempotencyKey is the Idempotency-Key header of try (1 for the first) of
// event id, whose send lease is token: "<event id>.<try>.<the token's first 8
// hex digits>", the same when net/http resends the request within the try,
// another on each redelivery. The try's number alone is the count of
// recorded tries plus one, so a try that was sent but never recorded (its
// record lost in a database stall, its replica killed mid-try) gave the next
// try its key, and the receiver's idempotency layer answered that one with
// the lost try's stored failure; each try's lease token is its own.
func idempotencyKey(id string, try int, token string) string {
	return id + "." + strconv.Itoa(try) + "." + token[:min(8, len(token))]
}

// answerExcerptBytes is how much of a non-2xx answer's body a try's error
// keeps.
const answerExcerptBytes = 256

// AnsweredPrefix begins the error of a try whose endpoint answered with a
// non-2xx status: the status follows, then RedirectNote for a 3xx, GoneNote
// for a 410 or InterimNote for a 1xx, then ": " and the start of the answer
// (answerText; none for a 1xx). The operator dashboard shows
// the error only up to the start of the answer (internal/ops deliveryCause).
const (
	AnsweredPrefix = "the webhook answered "
	RedirectNote   = " (a redirect, not followed: set the webhook URL to its target)"
	// InterimNote follows a 1xx status (101 Switching Protocols, the only
	// one net/http returns): the receiver switched protocols instead of
	// answering the POST.
	InterimNote = " (a protocol switch, not an answer to a webhook; the endpoint must answer the POST with a 2xx status)"
	// GoneNote follows a 410's status: the event is abandoned at that try.
	GoneNote = " (Gone: the receiver says this endpoint no longer exists, so the event is abandoned, not retried, " +
		"and will not be sent again; fix the owner's webhook URL (api_keys[].webhook.url in the configuration, " +
		"or a new key made with router keys create --webhook-url) or remove the webhook; " +
		"the owner's other events are still sent to it)"
)

// goneError is a try answered 410 Gone: its event is abandoned at once
// rather than retried for webhooks.retry_for, as production webhook senders
// do. Only this event is: the owner's webhook is not disabled, so a receiver
// that answered 410 by mistake loses only the events it was sent meanwhile.
type goneError struct{ msg string }

func (e *goneError) Error() string { return e.msg }

// readAnswerHead reads the start of a non-2xx answer's body from answer (the
// body read through webhooks.max_response_bytes, limit): up to
// answerExcerptBytes+1 bytes, and whether the body goes on past them or may
// (more), so that answerText hides a secret-bearing part of the webhook URL
// that the end of head cuts in two. Past answerExcerptBytes the excerpt's own
// limit cuts it; a limit at or below answerExcerptBytes cuts it before (head
// is limit bytes long), unless the answer's Content-Length says the body is
// no longer — a body of unknown length that fills the limit is taken as going
// on rather than read past it (a receiver that sends exactly that much and
// holds the connection open would hold the try to its timeout); and a read
// that broke off (the try's time up, the connection reset) may have ended
// partway into the quoted URL.
func readAnswerHead(answer io.Reader, contentLength, limit int64) (head []byte, more bool) {
	head, err := io.ReadAll(io.LimitReader(answer, answerExcerptBytes+1))
	n := int64(len(head))
	more = err != nil || n > answerExcerptBytes || n == limit && contentLength != n
	return head, more
}

// answerExcerpt is the text a try's error quotes of a non-2xx answer whose
// body begins with b (read up to answerExcerptBytes+1 bytes; more when the
// body goes on past b, or may — readAnswerHead): at most
// answerExcerptBytes of it, as valid UTF-8 (a malformed byte becomes U+FFFD,
// a character cut by the limit is dropped), with control and format
// characters (newlines, tabs, escapes, bidirectional overrides) as spaces,
// runs of spaces as one, ending in "…"
// when the body goes on. answerText hides in it what it quotes of the
// webhook URL; that text is stored, shown to the tenant by GET
// /v1/jobs/{id}/events and in logs; the dashboard shows only the status
// before it (AnsweredPrefix).
func answerExcerpt(b []byte, more bool) string {
	more = more || len(b) > answerExcerptBytes
	if more {
		b = b[:min(len(b), answerExcerptBytes)]
		// A character the limit cut in two is left out, not shown as
		// malformed.
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	var sb strings.Builder
	space := true // no leading space
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if unicode.In(r, unicode.Cc, unicode.Cf) || unicode.IsSpace(r) {
			if !space {
				sb.WriteByte(' ')
				space = true
			}
			continue
		}
		sb.WriteRune(r) // utf8.RuneError for a malformed byte
		space = false
	}
	text := strings.TrimRight(sb.String(), " ")
	if more && text != "" {
		text += "…"
	}
	return text
}

// sendError is a try that failed before any answer (a refused connection, a
// failed lookup or TLS handshake). Its text leaves out the webhook URL and
// the addresses it resolved to: net/http's *url.Error quotes the whole URL,
// whose path or query often is the endpoint's credential (Slack-style hook
// URLs), and the text is stored as the try's error — shown to the tenant by
// GET /v1/jobs/{id}/events — and logged by River on every retry.
type sendError struct{ err error }

func (e *sendError) Error() string { return "send: " + netredact.ErrorText(e.err) }

// Unwrap gives the cause without the *url.Error that quotes the URL.
func (e *sendError) Unwrap() error {
	var urlErr *url.Error
	if errors.As(e.err, &urlErr) && urlErr.Err != nil {
		return urlErr.Err
	}
	return e.err
}

// cutShort says why a try ended without an answer when its context did: its
// own timeout is no answer within it; River's for the whole job, which ran
// out first only when the read of the event took most of it, is no answer
// before that; a cancellation while the service stops is the shutdown's
// doing, not the endpoint's.
func (w *Worker) cutShort(tryCtx context.Context) error {
	switch cause := context.Cause(tryCtx); {
	case errors.Is(cause, errNoAnswer):
		return fmt.Errorf("no answer within %s", w.cfg.Timeout)
	case errors.Is(cause, context.DeadlineExceeded):
		return fmt.Errorf("no answer before the delivery job's time (%s, reading the event took the rest) ran out", w.Timeout(nil))
	case w.stopping.Load():
		return &interruptedError{err: tryCtx.Err(), cause: cause}
	default:
		return fmt.Errorf("delivery cancelled: %w", cause)
	}
}
