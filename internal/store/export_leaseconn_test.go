package store

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// LeaseConn is the open connection of s's leader lease (TryLead, Resign),
// nil for none.
func (s *Store) LeaseConn() *pgx.Conn {
	s.lease.mu.Lock()
	defer s.lease.mu.Unlock()
	return s.lease.conn
}

// LeaseIdleTimerArmed reports whether the lease connection's idle timer is
// armed.
func (s *Store) LeaseIdleTimerArmed() bool {
	s.lease.mu.Lock()
	defer s.lease.mu.Unlock()
	return s.lease.idle != nil
}

// CloseIdleLeaseConn does what the lease connection's idle timer does once
// the connection has been unused for the lease's ttl.
func (s *Store) CloseIdleLeaseConn() {
	s.lease.mu.Lock()
	s.lease.lastUsed = time.Now().Add(-s.lease.idleAfter)
	s.lease.mu.Unlock()
	s.closeIdleLeaseConn()
}
