package ops_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// stalledOpsWatchdog is how long a test waits for an operator endpoint to
// answer a database that stopped answering: six times the dashboard's own
// 5 s bound on its reads. It is a watchdog, not a measure: the endpoints
// under test must answer (503) rather than hang.
const stalledOpsWatchdog = 30 * time.Second

// GET /dashboard bounds its reads (5 s) and answers 503 listing the errors;
// /metrics' database reads have 2 s, /readyz 2 s. GET /v1/providers and
// GET /v1/conformance read with the request's own context, which has no
// deadline: on a database that stopped answering (a partition, a failover
// whose old primary vanished) a read sent on a pool connection the pool hands
// out without a liveness ping — pgxpool pings only connections idle for more
// than a second, so on a busy replica none — waits until TCP gives up (some
// 15 minutes on Linux). The operator's curl and a monitoring probe of
// /v1/providers hang instead of getting the documented 503 "Cannot read
// provider state … retry shortly", each holding a pool connection meanwhile.
// Found by review.
func TestOperatorEndpointsAnswerAStalledDatabase(t *testing.T) {
	for _, path := range []string{"/dashboard", "/v1/providers", "/v1/conformance"} { // /dashboard: the control, which passes
		t.Run(path[1:], func(t *testing.T) {
			db := testdb.New(t, store.Options{})
			proxy := testdb.StartProxy(t, db.URL)
			// A connection used within the last second is handed out unpinged:
			// this pool's every connection is such a one.
			pool := proxy.Pool(t, db.URL, func(c *pgxpool.Config) {
				c.MinConns, c.MaxConns = 0, 1
				c.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
			})
			srv := httptest.NewServer(ops.New(ops.Config{Providers: []string{"primary"}}, store.New(pool, store.Options{}), nil, nil))
			t.Cleanup(srv.Close)
			get := func(ctx context.Context) (int, string, error) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return 0, "", err
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b), nil
			}
			if code, body, err := get(context.Background()); err != nil || code != http.StatusOK {
				t.Fatalf("GET %s before the stall: %d %s %v", path, code, body, err)
			}
			proxy.Freeze() // the database stops answering on the pool's connection
			ctx, cancel := context.WithTimeout(context.Background(), stalledOpsWatchdog)
			defer cancel()
			code, body, err := get(ctx)
			if err != nil {
				t.Fatalf("GET %s on a stalled database: no answer within %s (%v); want a 503 within the bound the dashboard keeps", path, stalledOpsWatchdog, err)
			}
			if code != http.StatusServiceUnavailable {
				t.Errorf("GET %s on a stalled database: %d %s, want 503", path, code, body)
			}
		})
	}
}
