package store

import "time"

// SetRetryLockWait sets how long a retry waits for a held lock (the job's
// row, its owner's max_live_jobs lock), and returns a func that restores it.
func SetRetryLockWait(d time.Duration) (restore func()) {
	old := retryLockWaitNS.Swap(int64(d))
	return func() { retryLockWaitNS.Store(old) }
}
