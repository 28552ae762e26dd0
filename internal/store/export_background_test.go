package store

import "time"

// SetBackgroundCloseWaits sets how long Close waits for background writes
// before it cancels them (backgroundCloseWait), and then for the cancelled
// ones to return (backgroundCancelWait); it returns a func that restores
// both.
func SetBackgroundCloseWaits(wait, cancelWait time.Duration) (restore func()) {
	oldWait := backgroundCloseWaitNS.Swap(int64(wait))
	oldCancel := backgroundCancelWaitNS.Swap(int64(cancelWait))
	return func() {
		backgroundCloseWaitNS.Store(oldWait)
		backgroundCancelWaitNS.Store(oldCancel)
	}
}
