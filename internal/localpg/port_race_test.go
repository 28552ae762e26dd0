package localpg_test

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/localpg"
)

// A start whose port another cluster takes before its own server binds it
// (freePort's port is only free when it looks) gets a server of its own on
// another port, or fails saying so: never the URL of the server that holds
// the port, which has a router database too. Its server exited on "could
// not bind", but the readiness check asked the port first and found the
// other cluster. Here the start is given the running cluster's port, as if
// it had been free when asked. Found by review.
func TestStartOnAPortAnotherClusterTookGetsItsOwnServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	other, otherPort := clusterWithTable(ctx, t)
	given := 0
	defer localpg.SetFreePort(func() (int, error) {
		given++
		if given == 1 {
			return otherPort, nil
		}
		return loopbackPort(t), nil
	})()
	c, err := localpg.Start(ctx, localpg.Options{DataDir: tempDir(t) + "/data"})
	if err != nil {
		t.Fatalf("a start whose first port was taken: %v", err)
	}
	t.Cleanup(c.Stop)
	if given < 2 {
		t.Fatalf("the start asked for %d ports; want the taken one, then another", given)
	}
	if c.URL == other.URL {
		t.Fatalf("the start returned the URL of the cluster on the taken port: %s", c.URL)
	}
	assertOwnServer(ctx, t, c)
}

// Given only ports another cluster holds, a start fails, saying the port was
// taken, and returns no URL.
func TestStartOnlyOnTakenPortsFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, otherPort := clusterWithTable(ctx, t)
	defer localpg.SetFreePort(func() (int, error) { return otherPort, nil })()
	c, err := localpg.Start(ctx, localpg.Options{DataDir: tempDir(t) + "/data"})
	if err == nil {
		t.Cleanup(c.Stop)
		t.Fatalf("a start given only a port another cluster holds succeeded, with URL %s", c.URL)
	}
	if !strings.Contains(err.Error(), "port") || strings.Contains(err.Error(), "rm -rf") {
		t.Errorf("the error does not say the port was taken, or says to delete the new cluster:\n%v", err)
	}
}

// clusterWithTable starts a cluster holding a table only_here, stopped when t
// ends, and returns it and its port.
func clusterWithTable(ctx context.Context, t *testing.T) (*localpg.Cluster, int) {
	t.Helper()
	c, err := localpg.Start(ctx, localpg.Options{DataDir: tempDir(t) + "/data"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE only_here (x int)"); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return c, port
}

// assertOwnServer checks that c's URL reaches the server of c's data
// directory, which has no table only_here.
func assertOwnServer(ctx context.Context, t *testing.T, c *localpg.Cluster) {
	t.Helper()
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var dir string
	var other bool
	if err := conn.QueryRow(ctx, "SELECT current_setting('data_directory'), to_regclass('only_here') IS NOT NULL").Scan(&dir, &other); err != nil {
		t.Fatal(err)
	}
	if dir != c.DataDir || other {
		t.Errorf("%s reaches the server of %s (table only_here: %v), not that of %s", c.URL, dir, other, c.DataDir)
	}
}

// loopbackPort is a loopback port free when asked.
func loopbackPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Error(err)
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
