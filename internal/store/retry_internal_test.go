package store

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// notSent is an error pgconn says is safe to retry: nothing reached the server.
type notSent struct{}

func (notSent) Error() string     { return "connection failed before the statement was sent" }
func (notSent) SafeToRetry() bool { return true }

// A batch whose statement never reached the server, or was rolled back whole,
// is sent again; any other error is returned at once (the commit may have
// happened).
func TestRetryRolledBackRetriesOnlyWhatLeftNothing(t *testing.T) {
	calls := 0
	err := retryRolledBack(func() error {
		calls++
		switch calls {
		case 1:
			return notSent{}
		case 2:
			return &pgconn.PgError{Code: "40P01"}
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err=%v after %d calls, want success on the third", err, calls)
	}
	calls = 0
	ambiguous := errors.New("connection reset after the statement was sent")
	if err := retryRolledBack(func() error { calls++; return ambiguous }); !errors.Is(err, ambiguous) || calls != 1 {
		t.Fatalf("err=%v after %d calls, want the ambiguous error returned at once", err, calls)
	}
}
