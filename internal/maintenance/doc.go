// Package maintenance owns the work one replica does for all of them: electing
// that replica (Elector, a lease row in PostgreSQL renewed on the database
// clock) and the retention cleaner (Cleaner) that deletes jobs past
// retention.jobs. Recovery scans in internal/race are gated by the same
// Elector.
package maintenance
