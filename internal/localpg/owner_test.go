package localpg_test

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routerhq/router/internal/localpg"
)

// A root start (a CLI command under sudo) in another user's clone leaves
// that user's cluster alone: it used to give it to postgres, so the user's
// running router failed on every query, and the user could neither start
// it again nor delete it. Found by review.
func TestRootStartKeepsAnotherUsersClusterOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	nb, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, _ := strconv.Atoi(nb.Uid)
	gid, _ := strconv.Atoi(nb.Gid)
	if pg, err := user.Lookup("postgres"); err != nil || pg.Uid == nb.Uid {
		t.Skip("the server would run as nobody: no other user to test with")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	data := filepath.Join(tempDir(t), "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	version := filepath.Join(data, "PG_VERSION")
	if err := os.WriteFile(version, []byte("15\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{data, version} {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	c, err := localpg.Start(ctx, localpg.Options{DataDir: data})
	if err == nil {
		c.Stop()
		t.Fatal("a root start on another user's stopped cluster succeeded; want a refusal")
	}
	if !strings.Contains(err.Error(), "belongs to nobody") || !strings.Contains(err.Error(), "run this command as nobody") {
		t.Errorf("refusal %q does not say whose the directory is and what to do", err)
	}
	for _, p := range []string{data, version} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Sys().(*syscall.Stat_t).Uid; got != uint32(uid) {
			t.Errorf("%s now owned by uid %d; want %d (nobody) still", p, got, uid)
		}
	}
}

// A start finding another user's cluster (no server running) says whose it
// is and how to take it back, rather than starting a server that fails on
// "Permission denied" and advising a removal that cannot work.
func TestStartRefusesAnotherUsersCluster(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	t.Parallel()
	data := filepath.Join(tempDir(t), "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "PG_VERSION"), []byte("15\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(data, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	err := localpg.ClaimDataDir(data, nil)
	if err == nil || !strings.Contains(err.Error(), "belongs to uid 12345") || !strings.Contains(err.Error(), "sudo chown -R $(id -u):$(id -g) "+data) {
		t.Errorf("claim of another user's cluster, as that user: %v; want whose it is and the chown", err)
	}
}
