package api_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// /readyz is answered to anyone: when the database stops answering between
// its ping and the migrations check (a connection the pool must dial anew),
// the driver's message — user and database names, host and port — must not
// reach the caller either.
// /readyz answers anyone: a database that fails between the ping and the
// migrations read is "Database unreachable" without the driver's message
// (users, hosts, database names), which goes to the log.
func TestReadyzNeverReturnsTheDriversMessage(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MinConns, cfg.MaxConns = 0, 1
	var dials atomic.Int32
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) > 1 {
			return nil, errors.New("connection refused")
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	cfg.AfterRelease = func(*pgx.Conn) bool { return false } // the ping's connection is not kept
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv := httptest.NewServer(api.New(api.Config{}, api.Deps{Store: store.New(pool, store.Options{})}))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz %d %s, want 503", resp.StatusCode, body)
	}
	for _, secret := range []string{cfg.ConnConfig.User, cfg.ConnConfig.Host, "user=", "database="} {
		if strings.Contains(string(body), secret) {
			t.Errorf("/readyz answers the driver's message (%q) to anyone: %s", secret, body)
		}
	}
}
