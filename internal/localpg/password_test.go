package localpg_test

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/localpg"
)

// noPassword is u (a cluster's URL) without its password.
func noPassword(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p.User = url.User("postgres")
	return p.String()
}

// assertPrivate checks that c's URL carries the password of its 0600
// password file, this process's user's, which no log line shows, and that
// the server refuses a connection without it.
func assertPrivate(ctx context.Context, t *testing.T, c *localpg.Cluster, logs string) {
	t.Helper()
	path := filepath.Join(c.DataDir, localpg.PasswordFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no password file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
		t.Errorf("password file mode %v, uid %d; want 0600, %d", fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Uid, os.Geteuid())
	}
	b, _ := os.ReadFile(path)
	password := strings.TrimSpace(string(b))
	u, err := url.Parse(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := u.User.Password(); len(password) < 32 || got != password {
		t.Errorf("URL password %q, password file %q", got, password)
	}
	if strings.Contains(logs, password) {
		t.Errorf("the password is logged:\n%s", logs)
	}
	if conn, err := pgx.Connect(ctx, noPassword(t, c.URL)); err == nil {
		conn.Close(ctx)
		t.Error("a connection without the password was accepted")
	}
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatalf("the cluster's own URL: %v", err)
	}
	conn.Close(ctx)
}

func TestNewClusterHasAPrivatePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, _, logs := startLogged(t, ctx, false)
	if !strings.Contains(logs.String(), "xxxxx@127.0.0.1") {
		t.Errorf("no redacted URL logged:\n%s", logs)
	}
	assertPrivate(ctx, t, c, logs.String())
	hba, err := os.ReadFile(filepath.Join(c.DataDir, "pg_hba.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(hba), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") && f[len(f)-1] != "scram-sha-256" {
			t.Errorf("pg_hba.conf rule without scram-sha-256: %q", line)
		}
	}
}

// A cluster made by an earlier version (trust, no password file), its
// server not running, is given a password by the next start, its data kept.
func TestClusterMadeWithoutPasswordIsGivenOne(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data := filepath.Join(tempDir(t), "data")
	if err := localpg.InitTrustCluster(ctx, data, "CREATE TABLE kept (x int);\nINSERT INTO kept VALUES (7);\n"); err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	c, err := localpg.Start(ctx, localpg.Options{DataDir: data, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	if !strings.Contains(logs.String(), "giving it a password") {
		t.Errorf("no warning that the cluster is given a password:\n%s", logs)
	}
	assertPrivate(ctx, t, c, logs.String())
	u, _ := url.Parse(c.URL)
	u.Path = "/postgres"
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var x int
	if err := conn.QueryRow(ctx, "SELECT x FROM kept").Scan(&x); err != nil || x != 7 {
		t.Fatalf("the data made before: %d, %v", x, err)
	}
}

// A cluster whose password file was lost is given a new password by the
// next start: the user is never locked out of the data.
func TestLostPasswordFileIsReplaced(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data := filepath.Join(tempDir(t), "data")
	c, err := localpg.Start(ctx, localpg.Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	before := c.URL
	c.Stop()
	if err := os.Remove(filepath.Join(data, localpg.PasswordFile)); err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	c, err = localpg.Start(ctx, localpg.Options{DataDir: data, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatalf("a start after the password file was removed: %v", err)
	}
	t.Cleanup(c.Stop)
	if c.URL == before {
		t.Error("the same password after the file was lost")
	}
	assertPrivate(ctx, t, c, logs.String())
}

// A password file that does not match the cluster makes the start fail at
// once, naming the file and what to do, not after waiting for a server
// that refuses the password.
func TestWrongPasswordFileSaysWhatToDo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data := filepath.Join(tempDir(t), "data")
	c, err := localpg.Start(ctx, localpg.Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	path := filepath.Join(data, localpg.PasswordFile)
	if err := os.WriteFile(path, []byte("not-the-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = localpg.Start(ctx, localpg.Options{DataDir: data})
	if err == nil {
		c.Stop()
		t.Fatal("started with a password file that does not match the cluster")
	}
	for _, w := range []string{"refused the password in " + path, "remove that file"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "within 60s") {
		t.Errorf("waited for the server instead: %v", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	c, err = localpg.Start(ctx, localpg.Options{DataDir: data})
	if err != nil {
		t.Fatalf("a start after the wrong password file was removed, as advised: %v", err)
	}
	c.Stop()
}

// A start beside the running server of a cluster an earlier version made
// (`make run` of that version, a CLI command of this one) uses it as before,
// without a password, and warns; the cluster is given one at its next start.
func TestRunningServerWithoutPasswordIsUsedWithAWarning(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data := filepath.Join(tempDir(t), "data")
	if err := localpg.InitTrustCluster(ctx, data, "CREATE DATABASE router;\n"); err != nil {
		t.Fatal(err)
	}
	port := loopbackPort(t)
	stop, err := localpg.StartTrustServer(ctx, data, port)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = stop()
		}
	}()
	logs := &lockedBuffer{}
	c, err := localpg.Start(ctx, localpg.Options{DataDir: data, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if want := "postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/router?sslmode=disable"; c.URL != want {
		t.Errorf("URL %s, want %s", c.URL, want)
	}
	if !strings.Contains(logs.String(), "has no password file") {
		t.Errorf("no warning:\n%s", logs)
	}
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatalf("the running server without a password: %v", err)
	}
	conn.Close(ctx)
	c.Stop()
	stopped = true
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	c, err = localpg.Start(ctx, localpg.Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	assertPrivate(ctx, t, c, "")
}
