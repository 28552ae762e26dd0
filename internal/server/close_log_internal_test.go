package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// After a second signal, closing the database used to say it went on
// "without waiting for the connections still in use" nearly every time, with
// none in use: the signal had come before the close, so the select took it
// before the pool's Close, just begun, had finished closing the idle
// connections (and the embedded server was stopped under it). With no
// connection in use the close is waited for, and nothing is said. The old
// code lost that race on nearly every close: twenty closes make the test
// fail reliably without the fix. Found by review.
func TestCloseDatabaseAfterASecondSignalWithNoConnectionInUse(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	const closes = 20
	misleading := 0
	for range closes {
		pool, err := pgxpool.New(context.Background(), db.URL)
		if err != nil {
			t.Fatal(err)
		}
		if err := pool.Ping(context.Background()); err != nil { // an idle connection to close
			t.Fatal(err)
		}
		var buf bytes.Buffer
		closeDatabase(pool, nil, slog.New(slog.NewTextHandler(&buf, nil)), ended)
		if strings.Contains(buf.String(), "without waiting for the connections still in use") {
			misleading++
		}
	}
	if misleading > 0 {
		t.Fatalf("%d of %d closes of a pool with no connection in use logged, after a second signal, that they did not wait for connections still in use", misleading, closes)
	}
}
