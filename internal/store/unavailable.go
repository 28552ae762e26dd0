package store

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err says the database could not be reached or
// gave no answer — a refused or lost connection, a timeout, a server shutting
// down or out of connections — rather than answering a statement with an
// error: a condition a caller retries shortly, not a fault of its request or
// of the router. A caller's own cancellation is not one.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:min(2, len(pgErr.Code))] {
		case "08", "53", "57": // connection exception, insufficient resources, operator intervention
			return true
		}
		return pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC"
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
