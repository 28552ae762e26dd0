package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/netredact"
)

// HashAPIKey is how API keys are stored and looked up: SHA-256 of the key. Keys
// are long random strings, so a fast hash is the right one.
func HashAPIKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// NewAPIKey is a key to create.
type NewAPIKey struct {
	Owner string
	// WebhookURL, when set, becomes the owner's webhook, signed with a new
	// secret (returned once).
	WebhookURL string
	// Show, when set, is handed the new key (and secret) before the
	// transaction commits: the key exists nowhere else, so one that could
	// not be shown must not be stored. When Show returns an error the
	// transaction is rolled back and the error returned (wrapped): nothing
	// was stored. An error after Show returned nil is the commit's: the key
	// was not stored, unless the connection was lost as the commit went out
	// (OwnerForAPIKey then tells). Show runs while the transaction holds
	// the owners' webhooks' lock (with a webhook): it must be quick.
	Show func(CreatedAPIKey) error
}

// CreatedAPIKey is a new key and, with a webhook, its signing secret: both are
// shown once.
type CreatedAPIKey struct {
	ID            int64
	Key           string
	WebhookSecret string
	// ReplacedWebhookURL is the owner's webhook this key's took over (the
	// newest hooked key's webhook is the owner's), read in the transaction
	// that created the key; empty when the owner had none or the key has no
	// webhook.
	ReplacedWebhookURL string
}

// CreateAPIKey makes a new random key for owner, stores its hash and returns the
// key itself, which is shown once and never stored.
func (s *Store) CreateAPIKey(ctx context.Context, owner string) (string, error) {
	k, err := s.CreateAPIKeyWith(ctx, NewAPIKey{Owner: owner})
	return k.Key, err
}

// ConfiguredWebhookError: the owner's webhook comes from the configuration a
// router synced (SyncConfigWebhooks), which overrides a stored key's, so a
// key's new webhook would never be called nor its secret sign anything.
//
// With RemovedAt set, the configured webhook is marked removed: a replica
// started at RemovedAt with a configuration without it (an older one during
// a rolling update or a rollback, or the webhook's removal), and until
// RemovedUntil (the redelivery window, on the database clock) its place is
// kept for it — the owner's events are failed tries until a replica with it
// starts again, then delivered to it — so no stored key's webhook takes the
// owner meanwhile; URL is empty then. It is also ErrWebhookElsewhere (a
// rotation's refusal).
type ConfiguredWebhookError struct {
	Owner string
	URL   string // the configured webhook's; empty when it is removed
	// RemovedAt and RemovedUntil are set when the configured webhook is
	// marked removed (see above).
	RemovedAt, RemovedUntil *time.Time
}

func (e *ConfiguredWebhookError) Error() string {
	if e.RemovedAt == nil || e.RemovedUntil == nil {
		return fmt.Sprintf("owner %q's webhook (%s) comes from the configuration a running router synced (api_keys[].webhook), which overrides a stored key's",
			e.Owner, netredact.WebhookURLText(e.URL))
	}
	until := e.RemovedUntil.UTC().Format(time.RFC3339)
	return fmt.Sprintf("owner %q's webhook is set by the router configuration (api_keys[].webhook), which overrides a stored key's, "+
		"and a router replica started at %s with a configuration without it (an older configuration during a rolling update or a rollback, or its removal): "+
		"until %s (the database's clock) its place is kept, the owner's events waiting as failed tries to be delivered to it once a replica with it starts again. "+
		"Finish the rolling update (every replica started with the configuration that sets owner %s's api_keys[].webhook) and it is back; "+
		"if it was removed on purpose, a stored key's webhook can be set or rotated for the owner after %s, "+
		"or at once after `router keys forget-removed-webhook --owner %s` ends the wait",
		e.Owner, e.RemovedAt.UTC().Format(time.RFC3339), until, e.Owner, until, e.Owner)
}

// Unwrap makes the refusal ErrWebhookElsewhere too: the owner's webhook is
// not a stored key's.
func (e *ConfiguredWebhookError) Unwrap() error { return ErrWebhookElsewhere }

// removedConfiguredWebhook is owner's configured webhook marked removed
// within its redelivery window (SyncConfigWebhooks, removed_configured) as a
// *ConfiguredWebhookError, or nil when it has none.
func removedConfiguredWebhook(ctx context.Context, tx pgx.Tx, owner string) error {
	e := &ConfiguredWebhookError{Owner: owner}
	err := tx.QueryRow(ctx, `SELECT updated_at, removed_until FROM webhook_owners
		WHERE owner = $1 AND removed_configured AND removed_until > now()`, owner).Scan(&e.RemovedAt, &e.RemovedUntil)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read owner %s's removed configured webhook: %w", owner, err)
	}
	return e
}

// CreateAPIKeyWith creates a key, with a webhook when nk asks for one. A
// webhook for an owner whose webhook the configuration sets — or set, and a
// replica's start marked it removed less than its redelivery window ago
// (ConfiguredWebhookError.RemovedAt) — is refused with a
// *ConfiguredWebhookError, and nothing is stored: checked under the lock
// SyncConfigWebhooks takes, so a replica's start cannot slip in between.
func (s *Store) CreateAPIKeyWith(ctx context.Context, nk NewAPIKey) (CreatedAPIKey, error) {
	if nk.Owner == "" {
		return CreatedAPIKey{}, fmt.Errorf("owner is required")
	}
	out := CreatedAPIKey{Key: "rk_" + rand.Text()}
	var url, secret *string
	if nk.WebhookURL != "" {
		out.WebhookSecret = newWebhookSecret()
		url, secret = &nk.WebhookURL, &out.WebhookSecret
	}
	inTx := s.inTx
	if nk.Show != nil {
		inTx = s.inTxOnce // Show is told: not run twice
	}
	err := inTx(ctx, func(tx pgx.Tx) error {
		if url != nil {
			if err := lockWebhookOwners(ctx, tx); err != nil {
				return err
			}
			var configured string
			err := tx.QueryRow(ctx, `SELECT url FROM webhook_owners WHERE owner = $1 AND secret IS NULL AND url IS NOT NULL`,
				nk.Owner).Scan(&configured)
			if err == nil {
				return &ConfiguredWebhookError{Owner: nk.Owner, URL: configured}
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			if err := removedConfiguredWebhook(ctx, tx, nk.Owner); err != nil {
				return err
			}
			// Not configured: any webhook the owner has is a stored key's,
			// which this key's replaces.
			err = tx.QueryRow(ctx, `SELECT url FROM webhook_owners WHERE owner = $1 AND url IS NOT NULL`,
				nk.Owner).Scan(&out.ReplacedWebhookURL)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		// Announced as a revocation is (APIKeyRevokedChannel), delivered at
		// the commit: a replica that looked the key up before the commit —
		// Show prints it first, and a caller may use it as it is printed —
		// forgets the miss it cached instead of refusing the key for
		// auth.cache_ttl.
		err := tx.QueryRow(ctx, `INSERT INTO api_keys (owner, key_hash, prefix, webhook_url, webhook_secret)
			VALUES ($1, $2, $3, $4, $5) RETURNING id, pg_notify($6, encode(key_hash, 'hex'))`,
			nk.Owner, HashAPIKey(out.Key), out.Key[:7], url, secret, APIKeyRevokedChannel).Scan(&out.ID, nil)
		if err != nil {
			return err
		}
		if url != nil {
			if err := syncKeyWebhooks(ctx, tx, s.opt.RedeliveryWindow); err != nil {
				return err
			}
		}
		if nk.Show != nil {
			return nk.Show(out)
		}
		return nil
	})
	var configured *ConfiguredWebhookError
	if errors.As(err, &configured) {
		return CreatedAPIKey{}, err
	}
	if err != nil {
		return CreatedAPIKey{}, fmt.Errorf("store API key: %w", err)
	}
	return out, nil
}

// newWebhookSecret is a new stored key's webhook signing secret: 32 random
// bytes, as Standard Webhooks writes them ("whsec_" and base64).
func newWebhookSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// ErrWebhookElsewhere: the owner's webhook is not its newest hooked key's —
// the configuration a router synced sets it, or a newer key took over while
// rotating — so a rotation would change no delivery; nothing was changed.
var ErrWebhookElsewhere = errors.New("the owner's webhook is not its stored key's (the configuration of a running router sets it, or a newer key's webhook took over)")

// MaxWebhookOverlap is the longest a replaced webhook secret may keep signing
// deliveries after a rotation (RotateWebhookSecret).
const MaxWebhookOverlap = 30 * 24 * time.Hour

// RotatedWebhookSecret is the outcome of a rotation: the new secret (shown
// once) and until when the replaced one still signs.
type RotatedWebhookSecret struct {
	// KeyID is the stored key whose webhook was rotated, and URL its webhook.
	KeyID int64
	URL   string
	// Secret is the new signing secret.
	Secret string
	// PreviousUntil is when the replaced secret stops signing: now() plus
	// the overlap, on the database clock.
	PreviousUntil time.Time
	// CutShort, when set, is the end of an earlier rotation's overlap that
	// was still running: the secret it kept no longer signs anything.
	CutShort *time.Time
}

// RotateWebhookSecret gives owner's stored-key webhook — that of the key
// syncKeyWebhooks picks, the newest unrevoked key with a webhook — a new
// secret, and keeps the replaced one as its previous secret until now() +
// overlap on the database clock: until then every delivery is signed with
// both (Webhook.PreviousSecret). The owners' webhooks are rebuilt in the same
// transaction. An owner without a stored key with a webhook is ErrNotFound.
// A configured webhook (api_keys[].webhook) is not stored here: it rotates
// with previous_secret_env, and overrides a stored key's, which callers
// refuse first. An owner whose configured webhook a replica's start marked
// removed less than its redelivery window ago is refused with a
// *ConfiguredWebhookError (RemovedAt set; also ErrWebhookElsewhere): the
// key's webhook does not take the owner meanwhile, so its new secret would
// sign nothing.
func (s *Store) RotateWebhookSecret(ctx context.Context, owner string, overlap time.Duration) (RotatedWebhookSecret, error) {
	return s.RotateWebhookSecretShown(ctx, owner, overlap, nil)
}

// RotateWebhookSecretShown is RotateWebhookSecret that hands the rotation to
// show (nil: none) before it commits. The new secret exists nowhere else, so
// a rotation whose secret could not be shown must not take effect: the
// owner's deliveries would be signed with a secret nobody has, and rotating
// again to get one would cut short the overlap of the secret the receiver
// still uses. When show returns an error the transaction is rolled back and
// that error is returned (wrapped): nothing changed. An error after show
// returned nil is the commit's: the rotation did not take effect, unless the
// connection was lost as the commit went out (WebhookFor then tells).
// show runs while the transaction holds the key's row and the owners'
// webhooks' lock: it must be quick (a write of the secret).
func (s *Store) RotateWebhookSecretShown(ctx context.Context, owner string, overlap time.Duration, show func(RotatedWebhookSecret) error) (RotatedWebhookSecret, error) {
	if owner == "" {
		return RotatedWebhookSecret{}, fmt.Errorf("owner is required")
	}
	if overlap <= 0 || overlap > MaxWebhookOverlap {
		return RotatedWebhookSecret{}, fmt.Errorf("overlap %s: the replaced secret must keep signing for more than 0 and at most %dh (30 days)", overlap, int(MaxWebhookOverlap.Hours()))
	}
	out := RotatedWebhookSecret{Secret: newWebhookSecret()}
	err := s.inTxOnce(ctx, func(tx pgx.Tx) error { // show is told: not run twice
		// The key is locked before its secret is read, so concurrent
		// rotations each keep the secret the other replaced.
		err := lockWaitQueryRow(ctx, tx, KeyLockWait, `WITH k AS (
				SELECT id, CASE WHEN webhook_previous_until > now() THEN webhook_previous_until END AS running
				FROM api_keys WHERE owner = $1 AND webhook_url IS NOT NULL AND revoked_at IS NULL
				ORDER BY id DESC LIMIT 1 FOR UPDATE)
			UPDATE api_keys a SET webhook_previous_secret = a.webhook_secret, webhook_previous_until = now() + $2::interval,
				webhook_secret = $3
			FROM k WHERE a.id = k.id
			RETURNING a.id, a.webhook_url, a.webhook_previous_until, k.running`,
			owner, overlap, out.Secret).Scan(&out.KeyID, &out.URL, &out.PreviousUntil, &out.CutShort)
		if err != nil {
			if Busy(err) && !errors.Is(err, ErrBusy) {
				return &BusyError{What: fmt.Sprintf("owner %s's newest key with a webhook", owner), Wait: KeyLockWait, Err: err}
			}
			return notFound(err)
		}
		if err := syncKeyWebhooks(ctx, tx, s.opt.RedeliveryWindow); err != nil {
			return err
		}
		// Checked after the rebuild, under its lock: the configuration a
		// replica synced, or a newer key's webhook committed meanwhile,
		// may be the owner's webhook, and then the new secret would sign
		// nothing.
		var signs bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_owners WHERE owner = $1 AND secret = $2)`,
			owner, out.Secret).Scan(&signs); err != nil {
			return err
		}
		if !signs {
			if err := removedConfiguredWebhook(ctx, tx, owner); err != nil {
				return err
			}
			return ErrWebhookElsewhere
		}
		if show != nil {
			return show(out)
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrWebhookElsewhere) {
		return RotatedWebhookSecret{}, err
	}
	if err != nil {
		return RotatedWebhookSecret{}, fmt.Errorf("rotate the webhook secret of %s: %w", owner, err)
	}
	return out, nil
}

// OwnerForAPIKey returns the owner of an unrevoked stored key, or ErrNotFound.
func (s *Store) OwnerForAPIKey(ctx context.Context, key string) (string, error) {
	var owner string
	err := s.pool.QueryRow(ctx, `SELECT owner FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
		HashAPIKey(key)).Scan(&owner)
	return owner, notFound(err)
}

// APIKeyInfo describes a stored key (never the key itself).
type APIKeyInfo struct {
	ID         int64
	Owner      string
	Prefix     string
	CreatedAt  time.Time
	RevokedAt  *time.Time
	WebhookURL *string
	// WebhookPreviousUntil is set while a rotation's overlap runs (on the
	// database clock): until then the replaced secret signs too.
	WebhookPreviousUntil *time.Time
}

// ListAPIKeys lists the stored keys, oldest first.
func (s *Store) ListAPIKeys(ctx context.Context) ([]APIKeyInfo, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, owner, prefix, created_at, revoked_at, webhook_url,
		CASE WHEN webhook_previous_until > now() AND revoked_at IS NULL THEN webhook_previous_until END
		FROM api_keys ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list API keys: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (APIKeyInfo, error) {
		var k APIKeyInfo
		err := r.Scan(&k.ID, &k.Owner, &k.Prefix, &k.CreatedAt, &k.RevokedAt, &k.WebhookURL, &k.WebhookPreviousUntil)
		return k, err
	})
}

// RevokeAPIKey revokes key id: it is refused from then on — on every replica
// as soon as the revocation's notification (APIKeyRevokedChannel) reaches its
// listener, and within the auth cache's TTL when it is lost. Revoking a
// revoked key is a no-op; an unknown id is ErrNotFound.
func (s *Store) RevokeAPIKey(ctx context.Context, id int64) error {
	_, err := s.RevokeAPIKeyResult(ctx, id)
	return err
}

// APIKeyRevokedChannel is the LISTEN/NOTIFY channel on which a revocation is
// announced, committed with it: its payload is the revoked key's hash
// (HashAPIKey) in hex. Each replica's Listener hands it to the auth cache,
// which forgets the key (Listener.OnAPIKeyRevoked). A key's creation is
// announced on it too (CreateAPIKeyWith), so that a replica forgets a miss
// it cached for the key before its commit: the announcement means "forget
// what you cached for this key", whatever changed.
const APIKeyRevokedChannel = "router_api_key_revoked"

// KeyLockWait bounds how long the key commands' transactions — a revocation,
// a key created with a webhook, a webhook secret's rotation — wait for a lock
// another session holds: the key's row, or webhook_owners (lockWebhookOwners).
// Past it nothing changed and the error is a *BusyError (ErrBusy) naming what
// is held.
const KeyLockWait = 5 * time.Second

// keyBusy is err as a *BusyError naming stored key id when it is a lock wait
// that ran into KeyLockWait; any other err as it is.
func keyBusy(err error, id int64) error {
	if err != nil && Busy(err) && !errors.Is(err, ErrBusy) {
		return &BusyError{What: fmt.Sprintf("API key %d", id), Wait: KeyLockWait, Err: err}
	}
	return err
}

// RevokedAPIKey is what RevokeAPIKeyResult did.
type RevokedAPIKey struct {
	// RevokedAt is when the key was revoked, on the database clock: when its
	// revocation was about to commit, after its lock waits.
	RevokedAt time.Time
	// Already: the key was revoked before (at RevokedAt), so nothing changed.
	Already bool
	// EventsUntil, when set, is the end of the redelivery window of the
	// owner's webhook, on the database clock: the owner has no webhook after
	// the revocation and its webhook row is marked removed (syncKeyWebhooks),
	// so the events of its jobs that end before EventsUntil are still
	// written (failed tries until the owner has a webhook again, each
	// abandoned once webhooks.retry_for old), and none after. Nil when the
	// owner's webhook row is not marked removed after the revocation (it
	// still has a webhook, or never had one), and when Already.
	EventsUntil *time.Time
	// EventsFor is how long EventsUntil was after the revocation's
	// transaction began (the start of the redelivery window); 0 when
	// EventsUntil is nil.
	EventsFor time.Duration
}

// RevokeAPIKeyResult is RevokeAPIKey, saying whether the key was revoked
// already. The revocation also ends the key's webhook rotation overlap (its
// previous secret signs nothing once its key is revoked) and announces the
// key on APIKeyRevokedChannel. Revoking the owner's last key with a webhook
// marks the owner's webhook removed for Options.RedeliveryWindow
// (syncKeyWebhooks; RevokedAPIKey.EventsUntil). Its lock waits are bounded by
// KeyLockWait: a *BusyError when another session holds the key's row or
// webhook_owners.
func (s *Store) RevokeAPIKeyResult(ctx context.Context, id int64) (RevokedAPIKey, error) {
	var out RevokedAPIKey
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out = RevokedAPIKey{} // a retried transaction's
		var before *time.Time
		if err := lockWaitQueryRow(ctx, tx, KeyLockWait, `SELECT revoked_at FROM api_keys WHERE id = $1 FOR UPDATE`, id).Scan(&before); err != nil {
			return keyBusy(notFound(err), id)
		}
		if before != nil {
			out = RevokedAPIKey{RevokedAt: *before, Already: true}
			return syncKeyWebhooks(ctx, tx, s.opt.RedeliveryWindow)
		}
		var owner string
		if err := tx.QueryRow(ctx, `WITH r AS (
				UPDATE api_keys SET revoked_at = now(), webhook_previous_secret = NULL, webhook_previous_until = NULL
				WHERE id = $1 RETURNING revoked_at, key_hash, owner)
			SELECT r.revoked_at, r.owner, pg_notify($2, encode(r.key_hash, 'hex')) FROM r`, id, APIKeyRevokedChannel).Scan(&out.RevokedAt, &owner, nil); err != nil {
			return err
		}
		if err := syncKeyWebhooks(ctx, tx, s.opt.RedeliveryWindow); err != nil {
			return err
		}
		var forMicros int64
		err := tx.QueryRow(ctx, `SELECT removed_until, (extract(epoch FROM removed_until - now()) * 1e6)::bigint
			FROM webhook_owners WHERE owner = $1 AND removed_until IS NOT NULL`,
			owner).Scan(&out.EventsUntil, &forMicros)
		out.EventsFor = time.Duration(forMicros) * time.Microsecond
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("read the end of owner %s's webhook redelivery window: %w", owner, err)
		}
		// Stamped last, after every lock wait: a replica may serve the key
		// from its cache until this commits, and a re-run of the revocation
		// waits the rest of auth.cache_ttl from this time.
		return tx.QueryRow(ctx, `UPDATE api_keys SET revoked_at = clock_timestamp() WHERE id = $1 RETURNING revoked_at`,
			id).Scan(&out.RevokedAt)
	})
	return out, err
}
