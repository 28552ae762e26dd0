package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/routerhq/router/internal/store"
)

// Unavailable tells an outage (a connection lost or refused, a server
// shutting down) from a statement's answer and from a caller that left.
func TestUnavailableTellsAnOutageFromAnAnswer(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{context.Canceled, false},
		{fmt.Errorf("read job: %w", context.Canceled), false},
		{store.ErrNotFound, false},
		{&pgconn.PgError{Severity: "ERROR", Code: "23505"}, false},
		{&pgconn.PgError{Severity: "ERROR", Code: "22P02"}, false},
		{&pgconn.PgError{Severity: "FATAL", Code: "57P01"}, true}, // admin_shutdown
		{&pgconn.PgError{Severity: "FATAL", Code: "53300"}, true}, // too_many_connections
		{&pgconn.PgError{Severity: "ERROR", Code: "57014"}, true}, // statement timeout
		{fmt.Errorf("list jobs: %w", context.DeadlineExceeded), true},
		{errors.New("unexpected EOF"), false},
	} {
		if got := store.Unavailable(c.err); got != c.want {
			t.Errorf("Unavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
