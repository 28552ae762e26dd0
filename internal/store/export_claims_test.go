package store

// SetPathBatchHooks installs the success path's batches' test hooks: run when
// a caller has become the leader, before it takes its batch; and told the
// queue's length after each enqueue.
func (s *Store) SetPathBatchHooks(beforeSelfBatch func(), onQueued func(n int)) {
	s.paths.beforeSelfBatch, s.paths.onQueued = beforeSelfBatch, onQueued
}

// PathLeaders is how many leaders the success path's batches have now.
func (s *Store) PathLeaders() int {
	s.paths.mu.Lock()
	defer s.paths.mu.Unlock()
	return s.paths.leaders
}
