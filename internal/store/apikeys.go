package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
)

// HashAPIKey is how API keys are stored and looked up: SHA-256 of the key. Keys
// are long random strings, so a fast hash is the right one.
func HashAPIKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// CreateAPIKey makes a new random key for owner, stores its hash and returns the
// key itself, which is shown once and never stored.
func (s *Store) CreateAPIKey(ctx context.Context, owner string) (string, error) {
	if owner == "" {
		return "", fmt.Errorf("owner is required")
	}
	key := "rk_" + rand.Text()
	_, err := s.pool.Exec(ctx, `INSERT INTO api_keys (owner, key_hash, prefix) VALUES ($1, $2, $3)`,
		owner, HashAPIKey(key), key[:7])
	if err != nil {
		return "", fmt.Errorf("store API key: %w", err)
	}
	return key, nil
}

// OwnerForAPIKey returns the owner of an unrevoked stored key, or ErrNotFound.
func (s *Store) OwnerForAPIKey(ctx context.Context, key string) (string, error) {
	var owner string
	err := s.pool.QueryRow(ctx, `SELECT owner FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
		HashAPIKey(key)).Scan(&owner)
	return owner, notFound(err)
}
