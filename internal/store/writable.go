package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// ErrReadOnly: the database answers but accepts no writes — a standby (a
// demoted primary after a failover, or a replica the URL names by mistake),
// or default_transaction_read_only set for the router's role or database.
// Every job would fail at its first write; a readiness probe says so.
var ErrReadOnly = errors.New("the database is read-only (a standby, or default_transaction_read_only = on): " +
	"point DATABASE_URL at the primary (with several hosts, add target_session_attrs=read-write)")

// rowQuerier is what checkWritable asks: a pool's connection or one of its own.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// checkWritable asks the database whether a transaction there may write —
// the readiness probe's ping, so a database that answers but accepts no
// writes is not ready (ErrReadOnly). Sent as a simple query: no statement
// is prepared on the connection.
func checkWritable(ctx context.Context, q rowQuerier) error {
	var readOnly string
	if err := q.QueryRow(ctx, "SELECT current_setting('transaction_read_only')", pgx.QueryExecModeSimpleProtocol).Scan(&readOnly); err != nil {
		return err
	}
	if readOnly == "on" {
		return ErrReadOnly
	}
	return nil
}
