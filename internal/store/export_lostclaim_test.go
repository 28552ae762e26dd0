package store

import "time"

// SetLostClaimRetryFor sets how long a lost claim's hand-over retries while
// the database does not answer (lostClaimRetryFor), and returns a func that
// restores it.
func SetLostClaimRetryFor(d time.Duration) (restore func()) {
	old := lostClaimRetryForNS.Swap(int64(d))
	return func() { lostClaimRetryForNS.Store(old) }
}
