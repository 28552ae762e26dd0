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
// command. It reports whether there was anything to end; a call with nothing
// to end is one read. Run by the maintenance leader (maintenance.Cleaner).
func (s *Store) ExpireRemovedWebhooks(ctx context.Context) (bool, error) {
	var due bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_owners WHERE removed_until <= now())`).Scan(&due); err != nil {
		return false, fmt.Errorf("find removed webhooks past their window: %w", err)
	}
	if !due {
		return false, nil
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error { return syncKeyWebhooks(ctx, tx, s.opt.RedeliveryWindow) })
	if err != nil {
		return false, fmt.Errorf("end removed webhooks' places: %w", err)
	}
	return true, nil
}
