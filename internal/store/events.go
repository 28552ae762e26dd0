package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Event statuses.
const (
	EventPending   = "pending"   // not delivered yet; River retries it
	EventDelivered = "delivered" // a 2xx answer was received
	EventAbandoned = "abandoned" // the retry window passed without a 2xx
)

// Event is a completion event of a job (the outbox row written by the
// jobs_outbox trigger in the transaction that changed the job's state), with
// its delivery tries.
type Event struct {
	ID          string     `json:"id"`
	JobID       string     `json:"job_id"`
	Owner       string     `json:"-"`
	Type        string     `json:"type"`
	JobVersion  int64      `json:"job_version"`
	CreatedAt   time.Time  `json:"created_at"`
	Status      string     `json:"status"`
	Tries       int        `json:"tries"`
	LastError   *string    `json:"last_error"`
	DeliveredAt *time.Time `json:"delivered_at"`
	Deliveries  []Delivery `json:"deliveries"`
	// Body is the payload frozen at the first try (nil before it).
	Body []byte `json:"-"`
	// Age is how old the event was on the database clock (now() minus
	// created_at) when EventForDelivery read it; zero from other reads. The
	// delivery worker's "retry until retry_for old" is decided on it, never on
	// a process clock, so replicas with skewed clocks agree.
	Age time.Duration `json:"-"`
	// DBNow is the database's now() when EventForDelivery read the event
	// (zero from other reads): the delivery worker measures its own clock's
	// offset from the database's with it, and schedules its retries and
	// snoozes on the database clock.
	DBNow time.Time `json:"-"`
	// SendLease is what ClaimEventForDelivery's claim got of the event's
	// send lease (zero from other reads).
	SendLease SendLease `json:"-"`
	// RemovedWebhook is, from EventForDelivery and ClaimEventForDelivery,
	// the removal of the owner's configured webhook that leaves it without
	// one: a replica's start marked it removed (SyncConfigWebhooks,
	// removed_configured) and its place is kept until its window ends, so no
	// stored key's webhook takes the owner meanwhile — until
	// ForgetRemovedWebhook ends the wait. Nil otherwise, and from other reads.
	RemovedWebhook *WebhookRemoval `json:"-"`
}

// WebhookRemoval is a configured webhook marked removed by a replica's start
// (SyncConfigWebhooks), on the database clock: At the start's, Until the end
// of the place it keeps (removed_until).
type WebhookRemoval struct{ At, Until time.Time }

// Delivery is one delivery try of an event.
type Delivery struct {
	Try        int       `json:"try"`
	URL        string    `json:"url"`
	StartedAt  time.Time `json:"started_at"`
	LatencyMS  int64     `json:"latency_ms"`
	StatusCode *int      `json:"status_code"`
	Error      *string   `json:"error"`
}

// Webhook is where an owner's events go. Secret is empty when it comes from
// the configuration (api_keys[].webhook.secret_env) rather than a stored key.
type Webhook struct {
	URL    string
	Secret string
	// PreviousSecret is a stored key's secret replaced by `router keys
	// rotate-webhook-secret` (RotateWebhookSecret), while its overlap has
	// not ended on the database clock: deliveries carry a second signature
	// with it. Empty otherwise, and always for a configured webhook (its
	// previous secret is api_keys[].webhook.previous_secret_env).
	PreviousSecret string
}

// SyncConfigWebhooks makes the configured webhooks (owner -> URL) the owners'
// webhooks; a configured webhook overrides one set by a stored key.
//
// A configured webhook that urls no longer has is marked removed (url NULL,
// removed_until = now() + Options.RedeliveryWindow; migration 0022), not
// deleted: each replica syncs its configuration at start, so during a rolling
// update a replica with an older configuration removes a webhook a newer one
// added, and the events of the owner's jobs that end before a replica with the
// newer configuration starts again must still be written (failed tries until
// the webhook is back, then delivered). A removed row is no webhook to its
// readers (WebhookFor, EventForDelivery); the outbox writes no more events for
// it once removed_until has passed (the webhook was removed on purpose), and
// this sync then deletes it.
//
// Until then the removed row stays the configured webhook's place
// (removed_configured, migration 0032): no stored key's webhook takes it
// (syncKeyWebhooks), and a key's new webhook or rotation for the owner is
// refused (*ConfiguredWebhookError with RemovedAt). Otherwise an owner's
// older hooked key, overridden by the configured webhook, would get the
// events of the gap — signed with its secret, sent to its URL — and the
// configured receiver would never get them.
func (s *Store) SyncConfigWebhooks(ctx context.Context, urls map[string]string) error {
	owners := make([]string, 0, len(urls)) // never nil: <> ALL(NULL) matches no row
	for owner := range urls {
		owners = append(owners, owner)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockWebhookOwners(ctx, tx); err != nil {
			return err
		}
		// A row removed already keeps its removed_until: a replica with the
		// older configuration starting again does not extend the window.
		if _, err := tx.Exec(ctx, `UPDATE webhook_owners SET url = NULL, removed_until = now() + $2::interval,
				removed_configured = true, updated_at = now()
			WHERE secret IS NULL AND url IS NOT NULL AND owner <> ALL($1::text[])`, owners, s.opt.RedeliveryWindow); err != nil {
			return fmt.Errorf("mark removed webhooks: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM webhook_owners WHERE removed_until <= now()`); err != nil {
			return fmt.Errorf("delete webhooks removed longer than the redelivery window: %w", err)
		}
		for owner, url := range urls {
			if _, err := tx.Exec(ctx, `INSERT INTO webhook_owners (owner, url) VALUES ($1, $2)
				ON CONFLICT (owner) DO UPDATE SET url = EXCLUDED.url, secret = NULL,
					previous_secret = NULL, previous_until = NULL, removed_until = NULL, removed_configured = false,
					updated_at = now()`, owner, url); err != nil {
				return fmt.Errorf("sync webhook of %s: %w", owner, err)
			}
		}
		return syncKeyWebhooks(ctx, tx, s.opt.RedeliveryWindow)
	})
}

// syncKeyWebhooks rebuilds the webhooks that come from stored keys: per owner,
// the newest unrevoked key with a webhook, unless the configuration sets one;
// with the key's previous secret while its rotation's overlap runs
// (RotateWebhookSecret picks the same key). A configured webhook marked
// removed (SyncConfigWebhooks; removed_configured) keeps its row until its
// removed_until: the owner has no webhook meanwhile (its events are failed
// tries, delivered once a replica with the webhook in its configuration
// starts again), and the key's webhook takes the owner only once the row is
// deleted, after removed_until.
//
// An owner left with no stored key's webhook (its last hooked key revoked)
// has its row marked removed as a configured webhook's is (url, secrets
// NULL; removed_until = now() + window, the redelivery window, on the
// database clock), not deleted: the outbox writes only the events of owners
// with a row, so the jobs still running at the revocation (a key rotation
// done revoke-first) would end unannounced, even to the webhook the operator
// gives the owner again right after. Until removed_until the owner's events
// are written, each a failed try (no webhook) retried until it is
// webhooks.retry_for old, then abandoned; a new key's webhook takes such a
// row back at once (it is no configured webhook's place), and the pending
// events are delivered to it. A row removed already
// keeps its removed_until; one whose removed_until has passed is deleted.
func syncKeyWebhooks(ctx context.Context, tx pgx.Tx, window time.Duration) error {
	if err := lockWebhookOwners(ctx, tx); err != nil {
		return err
	}
	// A secret whose overlap has ended signs nothing: it is not kept at rest
	// (it may have been rotated out because it leaked). Between rebuilds the
	// maintenance leader erases such secrets (ExpireRemovedWebhooks).
	if err := clearEndedOverlaps(ctx, tx); err != nil {
		return fmt.Errorf("sync key webhooks: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM webhook_owners WHERE removed_until <= now()`); err != nil {
		return fmt.Errorf("sync key webhooks: delete webhooks removed longer than the redelivery window: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE webhook_owners w SET url = NULL, secret = NULL, previous_secret = NULL, previous_until = NULL,
			removed_until = now() + $1::interval, updated_at = now()
		WHERE w.secret IS NOT NULL AND NOT EXISTS (SELECT 1 FROM api_keys k
			WHERE k.owner = w.owner AND k.webhook_url IS NOT NULL AND k.revoked_at IS NULL)`, window); err != nil {
		return fmt.Errorf("sync key webhooks: mark removed the webhooks of owners without a hooked key: %w", err)
	}
	// A configured webhook (secret NULL, url set) is left as it is: it
	// overrides the key's; so is one marked removed (removed_configured)
	// until its removed_until: rows past it were deleted above.
	_, err := tx.Exec(ctx, `INSERT INTO webhook_owners (owner, url, secret, previous_secret, previous_until)
		SELECT DISTINCT ON (owner) owner, webhook_url, webhook_secret,
			CASE WHEN webhook_previous_until > now() THEN webhook_previous_secret END,
			CASE WHEN webhook_previous_until > now() THEN webhook_previous_until END
		FROM api_keys -- ended overlaps were erased above, but for the keys another transaction holds (skipped)
		WHERE webhook_url IS NOT NULL AND revoked_at IS NULL
		ORDER BY owner, id DESC
		ON CONFLICT (owner) DO UPDATE SET url = EXCLUDED.url, secret = EXCLUDED.secret,
			previous_secret = EXCLUDED.previous_secret, previous_until = EXCLUDED.previous_until,
			removed_until = NULL, removed_configured = false, updated_at = now()
		WHERE webhook_owners.secret IS NOT NULL
			OR (webhook_owners.removed_until IS NOT NULL AND NOT webhook_owners.removed_configured)`)
	if err != nil {
		return fmt.Errorf("sync key webhooks: %w", err)
	}
	return nil
}

// lockWebhookOwners makes rebuilds of webhook_owners take turns: each
// deletes and re-inserts the rows from what it reads of api_keys, so two at
// once (a rotation and a key created for another owner, or a replica's start)
// would let the later commit's rows, read before the earlier one committed,
// win — a rotation silently lost. The lock does not block readers (the
// outbox, deliveries), only other writers of the table.
//
// The wait for it, and the rest of the transaction's lock waits, are bounded
// by KeyLockWait (lockWaitSQL, batched with the LOCK): a session that holds
// the table (an operator's transaction left open in psql) would otherwise
// hold a key command, or a replica's start, for as long as it does. Past it
// the error is a *BusyError naming the table; nothing changed.
func lockWebhookOwners(ctx context.Context, tx pgx.Tx) error {
	b := &pgx.Batch{}
	b.Queue(lockWaitSQL, lockWaitArg(KeyLockWait))
	b.Queue(`LOCK TABLE webhook_owners IN SHARE ROW EXCLUSIVE MODE`)
	err := tx.SendBatch(ctx, b).Close()
	if err != nil && Busy(err) {
		return &BusyError{What: "the webhook owners table (webhook_owners)", Wait: KeyLockWait, Err: err}
	}
	if err != nil {
		return fmt.Errorf("lock webhook owners: %w", err)
	}
	return nil
}

// WebhookFor returns owner's webhook, or ErrNotFound (also for a configured
// webhook marked removed: see SyncConfigWebhooks). Its PreviousSecret is set
// only while the rotation's overlap runs on the database clock.
func (s *Store) WebhookFor(ctx context.Context, owner string) (Webhook, error) {
	var w Webhook
	var secret, previous *string
	err := s.pool.QueryRow(ctx, `SELECT url, secret, CASE WHEN previous_until > now() THEN previous_secret END
		FROM webhook_owners WHERE owner = $1 AND url IS NOT NULL`, owner).Scan(&w.URL, &secret, &previous)
	if secret != nil {
		w.Secret = *secret
	}
	if previous != nil {
		w.PreviousSecret = *previous
	}
	return w, notFound(err)
}

const eventColumns = `e.id::text, e.job_id::text, e.owner, e.type, e.job_version, e.created_at, e.status, e.tries,
	e.last_error, e.delivered_at`

func scanEvent(row pgx.Row, extra ...any) (*Event, error) {
	var e Event
	err := row.Scan(append([]any{&e.ID, &e.JobID, &e.Owner, &e.Type, &e.JobVersion, &e.CreatedAt, &e.Status, &e.Tries,
		&e.LastError, &e.DeliveredAt}, extra...)...)
	if err != nil {
		return nil, notFound(err)
	}
	e.Deliveries = []Delivery{}
	return &e, nil
}

// EventForDelivery reads, in one round trip batched with other deliveries'
// reads (eventRead), what the delivery worker needs of an event: the event
// with its frozen body and its age on the database clock (Event.Age), its
// owner's webhook (nil when the owner has none any more) and, while no body
// is frozen yet, the job it announces as the event's transition left it (see
// eventreads.go; nil when the body is frozen, or when retention deleted the
// job).
func (s *Store) EventForDelivery(ctx context.Context, id string) (*Event, *Webhook, *Job, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, nil, nil, ErrNotFound
	}
	r := &eventRead{id: id}
	if err := s.readEvent(ctx, r); err != nil {
		return nil, nil, nil, err
	}
	return r.ev, r.wh, r.job, nil
}

// FreezeEventBody stores body as the event's payload unless one is stored
// already, and returns the stored one: every redelivery sends the same bytes.
// The write is durable when it returns, batched with other deliveries' writes
// (deliveryWrite).
func (s *Store) FreezeEventBody(ctx context.Context, id string, body []byte) ([]byte, error) {
	w := &deliveryWrite{freeze: &freezeRequest{id: id, body: body}}
	if err := s.writeDelivery(ctx, w); err != nil {
		return nil, err
	}
	return w.freeze.out, nil
}

// DeliveryTry is the outcome of one delivery try.
type DeliveryTry struct {
	EventID string
	// Try is not stored: RecordDelivery numbers a try by the event's count of
	// recorded tries (see recordSQL), so tries recorded late or concurrently
	// still get distinct numbers.
	Try        int
	URL        string
	StartedAt  time.Time
	Latency    time.Duration
	StatusCode int    // 0: no answer
	Error      string // empty: delivered
	// Status is the event's status after this try, as the try sees it; the
	// event keeps the status it ended with before (RecordDelivery returns
	// the stored one).
	Status string
	// Sender is the token of the try's send lease (SendClaim): its record
	// clears the event's lease if the try still holds it, and no other
	// try's. Empty: it clears none.
	Sender string
}

// RecordDelivery stores a try and the event's resulting status together, in
// one commit, batched with other deliveries' writes (deliveryWrite), and
// returns the event's status as stored after the write. That is d.Status
// unless the event had ended before (recordSQL): a try that gives up on its
// event recorded after another try that delivered it leaves it delivered, and
// the worker tells of the try by the stored status, not by d.Status.
func (s *Store) RecordDelivery(ctx context.Context, d DeliveryTry) (status string, err error) {
	w := &deliveryWrite{record: &d}
	if err := s.writeDelivery(ctx, w); err != nil {
		return "", err
	}
	if w.status == "" { // the insert of a try of no event fails first (recordSQL)
		return "", fmt.Errorf("record delivery: event %s: %w", d.EventID, ErrNotFound)
	}
	return w.status, nil
}

// JobEvents lists the events of owner's job with their delivery tries, oldest
// first. Another owner's job is ErrNotFound.
//
// The job's owner check, its events and their tries are read in one round
// trip and one snapshot: the three reads are one read-only REPEATABLE READ
// transaction (beginSnapshotSQL), begun and committed in the same batch.
// Three statements each seeing the database as of its own start saw a try
// and the event's status, which RecordDelivery commits together, at
// different moments: an event pending with no tries beside its delivered try.
func (s *Store) JobEvents(ctx context.Context, owner, jobID string) ([]*Event, error) {
	if err := checkJobID(jobID); err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	b.Queue(beginSnapshotSQL)
	b.Queue(jobOfOwnerSQL, jobID, owner)
	b.Queue(eventsOfJobSQL, jobID)
	b.Queue(deliveriesOfJobSQL, jobID)
	b.Queue(commitSQL)
	// A failure inside the transaction (the batch's statements go before one
	// Sync: the server skips the rest, COMMIT too) leaves its connection in
	// the failed transaction: the pool closes, rather than reuses, a
	// connection released so (br.Close).
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, fmt.Errorf("list events: begin the read's snapshot: %w", err)
	}
	var one int
	if err := br.QueryRow().Scan(&one); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("list events: read the job: %w", err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	events, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Event, error) { return scanEvent(r) })
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	byID := make(map[string]*Event, len(events))
	for _, e := range events {
		byID[e.ID] = e
	}
	if err := readRows(br, func(rows pgx.Rows) error {
		var id string
		var d Delivery
		if err := rows.Scan(&id, &d.Try, &d.URL, &d.StartedAt, &d.LatencyMS, &d.StatusCode, &d.Error); err != nil {
			return err
		}
		if e := byID[id]; e != nil { // always: one snapshot, and the event is joined
			e.Deliveries = append(e.Deliveries, d)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	if _, err := br.Exec(); err != nil {
		return nil, fmt.Errorf("list events: commit the read's snapshot: %w", err)
	}
	return events, nil
}

// JobEvents' reads: the job $1 if its owner is $2, its events, and their
// delivery tries, each event's in the order they were recorded.
const (
	jobOfOwnerSQL      = `SELECT 1 FROM jobs WHERE id = $1 AND owner = $2`
	eventsOfJobSQL     = `SELECT ` + eventColumns + ` FROM job_events e WHERE e.job_id = $1 ORDER BY e.created_at, e.id`
	deliveriesOfJobSQL = `SELECT d.event_id::text, d.try, d.url, d.started_at, d.latency_ms, d.status_code, d.error
	FROM job_events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.job_id = $1 ORDER BY d.id`
)

// DeliveryStats is what the dashboard shows of webhook deliveries.
type DeliveryStats struct {
	Pending int // events not delivered yet
	// FailingCount is the pending events whose last try failed: tried, and
	// their last error not the note of a try the router's own shutdown cut
	// short (WebhookDeliveryStats' interruptedNote), which the endpoint did
	// not fail. Failing are the oldest of them, oldest first (at most 20).
	FailingCount int
	Failing      []*Event
	// Interrupted is the pending events whose last try a shutdown cut short
	// (their last error is the note); InterruptedEvents the oldest of them,
	// oldest first (at most 20).
	Interrupted       int
	InterruptedEvents []*Event
}

// deliveryStatsShown is how many failing events, and how many interrupted
// ones, DeliveryStats lists.
const deliveryStatsShown = 20

// WebhookDeliveryStats summarises pending, failing and interrupted
// deliveries. interruptedNote is the whole last error the webhook worker
// records for a try the router's shutdown cut short (webhook.InterruptedNote:
// passed in, as the webhook package imports this one): such an event is
// counted and listed apart, not as failing.
func (s *Store) WebhookDeliveryStats(ctx context.Context, interruptedNote string) (DeliveryStats, error) {
	var st DeliveryStats
	if err := s.pool.QueryRow(ctx, `SELECT count(*),
		count(*) FILTER (WHERE tries > 0 AND last_error IS DISTINCT FROM $1),
		count(*) FILTER (WHERE last_error = $1)
		FROM job_events WHERE status = 'pending'`, interruptedNote).Scan(&st.Pending, &st.FailingCount, &st.Interrupted); err != nil {
		return st, fmt.Errorf("count pending deliveries: %w", err)
	}
	list := func(what, where string) ([]*Event, error) {
		rows, err := s.pool.Query(ctx, `SELECT `+eventColumns+` FROM job_events e
			WHERE e.status = 'pending' AND `+where+` ORDER BY e.created_at, e.id LIMIT $2`, interruptedNote, deliveryStatsShown)
		if err != nil {
			return nil, fmt.Errorf("list %s deliveries: %w", what, err)
		}
		events, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Event, error) { return scanEvent(r) })
		if err != nil {
			return nil, fmt.Errorf("list %s deliveries: %w", what, err)
		}
		return events, nil
	}
	var err error
	if st.FailingCount > 0 {
		if st.Failing, err = list("failing", `e.tries > 0 AND e.last_error IS DISTINCT FROM $1`); err != nil {
			return st, err
		}
	}
	if st.Interrupted > 0 {
		if st.InterruptedEvents, err = list("interrupted", `e.last_error = $1`); err != nil {
			return st, err
		}
	}
	return st, nil
}
