package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoRemovedWebhook: the owner has no configured webhook marked removed
// within its redelivery window (ForgetRemovedWebhook); nothing changed. It is
// also ErrNotFound.
var ErrNoRemovedWebhook = fmt.Errorf("no removed configured webhook keeps its place: %w", ErrNotFound)

// ForgottenWebhook is what ForgetRemovedWebhook did.
type ForgottenWebhook struct {
	// RemovedAt and RemovedUntil are the forgotten removal's: when a
	// replica's start marked the configured webhook removed, and until when
	// its place would have been kept (the database's clock).
	RemovedAt, RemovedUntil time.Time
	// URL is the owner's webhook now: its newest unrevoked hooked key's
	// (KeyID); empty, and KeyID 0, when it has none.
	URL   string
	KeyID int64
}

// ForgetRemovedWebhook ends, for owner, the place a configured webhook
// (api_keys[].webhook) marked removed by a replica's start keeps until its
// removed_until (SyncConfigWebhooks, removed_configured): the operator removed
// it on purpose. The removed row is deleted and the stored keys' webhooks
// rebuilt in the same transaction, under the owners' webhooks' lock, so the
// owner's newest unrevoked key made with a webhook takes the owner at once
// (its pending events are delivered there), and a key's new webhook or
// rotation for the owner is accepted from then on. An owner without such a
// row (none, one whose configured webhook is served, a stored key's, or one
// whose window has passed) is ErrNoRemovedWebhook, and nothing changed.
//
// A replica whose configuration sets the owner's webhook that starts later
// takes the owner back (SyncConfigWebhooks), as it would have anyway.
func (s *Store) ForgetRemovedWebhook(ctx context.Context, owner string) (ForgottenWebhook, error) {
	if owner == "" {
		return ForgottenWebhook{}, fmt.Errorf("owner is required")
	}
	var out ForgottenWebhook
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out = ForgottenWebhook{}
		if err := lockWebhookOwners(ctx, tx); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `DELETE FROM webhook_owners
			WHERE owner = $1 AND removed_configured AND url IS NULL AND removed_until > now()
			RETURNING updated_at, removed_until`, owner).Scan(&out.RemovedAt, &out.RemovedUntil)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNoRemovedWebhook
		}
		if err != nil {
			return fmt.Errorf("delete owner %s's removed configured webhook: %w", owner, err)
		}
		if err := syncKeyWebhooks(ctx, tx, s.opt.RedeliveryWindow); err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `SELECT k.id, w.url FROM webhook_owners w
			JOIN api_keys k ON k.owner = w.owner AND k.webhook_url = w.url AND k.webhook_secret = w.secret AND k.revoked_at IS NULL
			WHERE w.owner = $1 ORDER BY k.id DESC LIMIT 1`, owner).Scan(&out.KeyID, &out.URL)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("read owner %s's webhook: %w", owner, err)
		}
		return nil
	})
	if errors.Is(err, ErrNoRemovedWebhook) {
		return ForgottenWebhook{}, err
	}
	if err != nil {
		return ForgottenWebhook{}, fmt.Errorf("forget the removed configured webhook of %s: %w", owner, err)
	}
	return out, nil
}
