package store

import (
	"context"
	"time"
)

// ListUnknownAttemptsOff lists up to limit attempts that have been unknown
// for at least minAge (database clock), of jobs not ended, on providers
// (targets) other than those in configured: the attempts that this router's
// reconciliation, which looks up only the targets it configures
// (ListUnknownAttempts), never looks at — their target was removed from its
// configuration (a deploy), so only an operator, or a leader configuring the
// target again, resolves them. Oldest first.
func (s *Store) ListUnknownAttemptsOff(ctx context.Context, configured []string, minAge time.Duration, limit int) ([]UnknownAttempt, error) {
	if configured == nil {
		configured = []string{} // <> ALL of an empty array is true; of NULL, null
	}
	return s.listUnknownAttempts(ctx, `a.provider <> ALL($1)`, configured, minAge, limit)
}
