package store

import "time"

// SetBatchAcquireWait sets how long a batch waits for its connection
// (batchAcquireWait).
func (s *Store) SetBatchAcquireWait(d time.Duration) { s.acquireWait = d }

// SetSettleWait sets the bound of each database call a win or a claim makes
// without its caller's cancellation after its batch (settleWait).
func (s *Store) SetSettleWait(d time.Duration) { s.settleWait = d }
