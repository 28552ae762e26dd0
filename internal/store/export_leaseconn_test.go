package store

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// LeaseConn is the open connection of s's leader lease (TryLead, Resign),
// nil for none.
func (s *Store) LeaseConn() *pgx.Conn { return s.lease.open() }

// RenewConn is the open connection of s's lease renewal (RenewLeases), nil
// for none.
func (s *Store) RenewConn() *pgx.Conn { return s.renew.open() }

func (lc *leaseConn) open() *pgx.Conn {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.conn
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
	s.lease.closeIdle()
}

// HoldLeaderLeaseConn takes the leader lease's connection as a lease call
// under way does, until the returned func is called.
func (s *Store) HoldLeaderLeaseConn() (release func()) {
	s.lease.slot <- struct{}{}
	return s.lease.release
}
