package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// ChooseExpiredJobs runs, in tx, the statement that chooses the first batch
// of a retention pass (with the default redelivery window) and returns the
// jobs it chose, which it locked.
func ChooseExpiredJobs(ctx context.Context, tx pgx.Tx, after time.Duration, batch int) ([]string, error) {
	q, args := expiredJobsArgs(after, DefaultRedeliveryWindow, batch, RetentionCursor{})
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	_, ids, err := chosenJobs(rows, batch, RetentionCursor{})
	return ids, err
}
