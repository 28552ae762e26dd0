package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ExpireRemovedWebhooks ends the places webhook_owners keeps for removed
// webhooks whose removed_until has passed (on the database clock): it deletes
// those rows and lets the owners' stored keys' webhooks take the owners
// (syncKeyWebhooks), as a replica's start or a key command would. Without it
// an owner whose configured webhook was removed on purpose, and who has an
// unrevoked key made with --webhook-url, would have no webhook — its events
// not even written — from removed_until until the next start or key
// command.
//
// It also erases the previous secrets of rotations whose overlap has ended
// (clearEndedOverlaps), in api_keys and webhook_owners: they sign nothing,
// and without it one stayed at rest until the next rebuild of the owners'
// webhooks, which may never come. So a rotated-out secret is gone within a
// pass of the maintenance leader after its overlap.
//
// It reports whether there were removed webhooks to end (an erased secret
// alone is not reported); a call with nothing to do is one read. Run by the
// maintenance leader (maintenance.Cleaner).
func (s *Store) ExpireRemovedWebhooks(ctx context.Context) (bool, error) {
	var removed, ended bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_owners WHERE removed_until <= now()),
			EXISTS (SELECT 1 FROM api_keys WHERE webhook_previous_until <= now())
				OR EXISTS (SELECT 1 FROM webhook_owners WHERE previous_until <= now())`).Scan(&removed, &ended); err != nil {
		return false, fmt.Errorf("find removed webhooks past their window and rotated-out secrets past their overlap: %w", err)
	}
	switch {
	case removed: // the rebuild erases ended overlaps' secrets too
		if err := s.inTx(ctx, func(tx pgx.Tx) error { return syncKeyWebhooks(ctx, tx, s.opt.RedeliveryWindow) }); err != nil {
			return false, fmt.Errorf("end removed webhooks' places: %w", err)
		}
	case ended:
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			if err := lockWebhookOwners(ctx, tx); err != nil {
				return err
			}
			return clearEndedOverlaps(ctx, tx)
		})
		if err != nil {
			return false, fmt.Errorf("erase rotated-out webhook secrets whose overlap has ended: %w", err)
		}
	}
	return removed, nil
}

// clearEndedOverlaps erases the previous secrets whose rotation overlap has
// ended (previous_until <= now(), the database clock) in api_keys and
// webhook_owners: such a secret signs nothing, and it is not kept at rest (it
// may have been rotated out because it leaked). The caller holds the owners'
// webhooks' lock (lockWebhookOwners), so no rebuild writes webhook_owners
// meanwhile. Keys whose rows another transaction holds are skipped, not
// waited for: a key command (a rotation) locks its key's row before the
// owners' webhooks, the reverse of this order, and waiting here would
// deadlock with it; that command rewrites the row anyway, and the next pass
// erases what is still ended then. Both statements touch only the rows with
// an ended overlap.
func clearEndedOverlaps(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `UPDATE api_keys SET webhook_previous_secret = NULL, webhook_previous_until = NULL
		WHERE webhook_previous_until <= now() AND id IN (
			SELECT id FROM api_keys WHERE webhook_previous_until <= now() FOR UPDATE SKIP LOCKED)`); err != nil {
		return fmt.Errorf("erase the keys' rotated-out webhook secrets whose overlap has ended: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE webhook_owners SET previous_secret = NULL, previous_until = NULL
		WHERE previous_until <= now()`); err != nil {
		return fmt.Errorf("erase the owners' rotated-out webhook secrets whose overlap has ended: %w", err)
	}
	return nil
}
