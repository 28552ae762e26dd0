package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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
}

// CreatedAPIKey is a new key and, with a webhook, its signing secret: both are
// shown once.
type CreatedAPIKey struct {
	ID            int64
	Key           string
	WebhookSecret string
}

// CreateAPIKey makes a new random key for owner, stores its hash and returns the
// key itself, which is shown once and never stored.
func (s *Store) CreateAPIKey(ctx context.Context, owner string) (string, error) {
	k, err := s.CreateAPIKeyWith(ctx, NewAPIKey{Owner: owner})
	return k.Key, err
}

// CreateAPIKeyWith creates a key, with a webhook when nk asks for one.
func (s *Store) CreateAPIKeyWith(ctx context.Context, nk NewAPIKey) (CreatedAPIKey, error) {
	if nk.Owner == "" {
		return CreatedAPIKey{}, fmt.Errorf("owner is required")
	}
	out := CreatedAPIKey{Key: "rk_" + rand.Text()}
	var url, secret *string
	if nk.WebhookURL != "" {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		out.WebhookSecret = "whsec_" + base64.StdEncoding.EncodeToString(b)
		url, secret = &nk.WebhookURL, &out.WebhookSecret
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO api_keys (owner, key_hash, prefix, webhook_url, webhook_secret)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			nk.Owner, HashAPIKey(out.Key), out.Key[:7], url, secret).Scan(&out.ID)
		if err != nil || url == nil {
			return err
		}
		return syncKeyWebhooks(ctx, tx)
	})
	if err != nil {
		return CreatedAPIKey{}, fmt.Errorf("store API key: %w", err)
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
}

// ListAPIKeys lists the stored keys, oldest first.
func (s *Store) ListAPIKeys(ctx context.Context) ([]APIKeyInfo, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, owner, prefix, created_at, revoked_at, webhook_url FROM api_keys ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list API keys: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (APIKeyInfo, error) {
		var k APIKeyInfo
		err := r.Scan(&k.ID, &k.Owner, &k.Prefix, &k.CreatedAt, &k.RevokedAt, &k.WebhookURL)
		return k, err
	})
}

// RevokeAPIKey revokes key id: it is refused from then on (after the auth
// cache's TTL on replicas that saw it). Revoking a revoked key is a no-op; an
// unknown id is ErrNotFound.
func (s *Store) RevokeAPIKey(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var x int64
		err := tx.QueryRow(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING id`, id).Scan(&x)
		if err != nil {
			return notFound(err)
		}
		return syncKeyWebhooks(ctx, tx)
	})
}
