package store

import "time"

// SetAloneLockWait sets how long a claim, win or delivery write that its
// batch's lock wait failed waits for the row when its caller runs it alone
// (aloneLockWait), and returns a func restoring the previous wait.
func SetAloneLockWait(d time.Duration) (restore func()) {
	old := aloneLockWaitNS.Swap(int64(d))
	return func() { aloneLockWaitNS.Store(old) }
}

// SetOnAlone installs a hook run as a caller starts running alone its claim,
// win or delivery write that a batch found blocked on a held row.
func (s *Store) SetOnAlone(f func()) { s.paths.onAlone, s.deliveries.onAlone = f, f }
