package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// localdb deletes and recreates its data directory: one that another start
// is setting up (`make run` starting, another localdb), which holds the lock
// beside it, is in use. It refuses it (exit 2) and deletes nothing; it used
// to delete it from under that start. Found by review.
func TestLocalDBRefusesADirectoryAnotherStartHolds(t *testing.T) {
	unsetenv(t, "DATABASE_URL") // else localdb starts no server and touches no directory
	dir := filepath.Join(reachableDir(t), "pg")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	version := filepath.Join(dir, "PG_VERSION") // a stopped cluster, as far as checkDataDir sees
	if err := os.WriteFile(version, []byte("15\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "router.password"), []byte("x\n"), 0o600); err != nil { // one localdb made
		t.Fatal(err)
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600) // as localpg's start holds it
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	var code int
	_, stderr := captureOutput(t, func() {
		code = run(context.Background(), []string{"localdb", "--dir", dir, "--", "true"})
	})
	if code != 2 || !strings.Contains(stderr, "in use") || strings.Contains(stderr, "rm -rf") {
		t.Errorf("localdb --dir %s held by another start: exit code %d, stderr:\n%s\nwant exit code 2 saying it is in use", dir, code, stderr)
	}
	if _, err := os.Stat(version); err != nil {
		t.Errorf("the directory another start holds was changed: %v", err)
	}
}
