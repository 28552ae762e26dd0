package store

import "github.com/jackc/pgx/v5"

// LeaseConn is the open connection of the leader lease (TryLead, Resign)
// of s's pool, nil for none.
func (s *Store) LeaseConn() *pgx.Conn {
	leaseConns.Lock()
	defer leaseConns.Unlock()
	if lc := leaseConns.m[s.pool]; lc != nil {
		return lc.conn
	}
	return nil
}

// LeaseConnEntries is how many pools have a lease connection entry.
func LeaseConnEntries() int {
	leaseConns.Lock()
	defer leaseConns.Unlock()
	return len(leaseConns.m)
}

// CloseIdleLeaseConn does what the lease connection's watch does once the
// connection has been unused for the lease's ttl.
func (s *Store) CloseIdleLeaseConn() {
	leaseConns.Lock()
	lc := leaseConns.m[s.pool]
	leaseConns.Unlock()
	if lc != nil {
		closeIdleLeaseConn(s.pool, lc)
	}
}
