package localpg_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The embedded PostgreSQL (`make run`, `router localdb`, `database_url:
// embedded`) is initialised with --auth=trust and listens on 127.0.0.1: any
// process of any user on the machine connects to it as the superuser
// postgres, with no password — the URL it hands out carries none. As
// superuser it can read and change the router's data (stored keys' webhook
// secrets, every job), run programs as the server's OS user (COPY … TO
// PROGRAM: the developer's own account when not root) and read the server's
// environment (pg_read_file('/proc/self/environ')). That environment is the
// router's own, inherited whole by the postgres process (launch sets no
// cmd.Env): the provider API keys, ROUTER_DEMO_KEY, the ops key. On a shared
// development host or CI runner, another user takes them all.
//
// The server should require a credential that only the process that started
// it can read (a random password in a 0600 file beside the data directory,
// carried in the URL it hands out), and be started with a minimal
// environment, as run() starts initdb.
func TestEmbeddedServerTrustsEveryLocalUser(t *testing.T) {
	const secret = "sk-wpg8-provider-key-0123456789"
	t.Setenv("ROUTER_WPG8_PROVIDER_KEY", secret) // as OPENAI_API_KEY would be, for `router serve`
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, data, _ := startLogged(t, ctx, false)

	// 1. The server's environment is the starting process's, secrets included.
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", postmasterPid(t, data)))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(environ), secret) {
		t.Errorf("the embedded PostgreSQL server runs with the router's environment, its secrets included (ROUTER_WPG8_PROVIDER_KEY)")
	}

	// 2. Anyone on the machine connects as superuser without a password:
	// the URL carries the user name and port only, which `ss -ltn` shows.
	port := c.URL[strings.LastIndex(c.URL, ":")+1:]
	port = port[:strings.Index(port, "/")]
	conn, err := pgx.Connect(ctx, "postgres://postgres@127.0.0.1:"+port+"/postgres?sslmode=disable")
	if err != nil {
		return // refused without a credential: as it should be
	}
	defer conn.Close(ctx)
	var super string
	if err := conn.QueryRow(ctx, "SELECT current_setting('is_superuser')").Scan(&super); err != nil {
		t.Fatal(err)
	}
	// As superuser it runs programs as the server's OS user; here it reads
	// the server's environment.
	if _, err := conn.Exec(ctx, "CREATE TEMP TABLE env(line text)"); err != nil {
		t.Fatal(err)
	}
	_, copyErr := conn.Exec(ctx, `COPY env FROM PROGRAM 'env'`)
	var leaked bool
	if copyErr == nil {
		copyErr = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM env WHERE line LIKE '%' || $1 || '%')", secret).Scan(&leaked)
	}
	t.Errorf("a connection with no password (user postgres, port %s) was accepted, superuser=%s; through COPY … FROM PROGRAM "+
		"it read the provider key from the server's environment: %v (%v)", port, super, leaked, copyErr)
}
