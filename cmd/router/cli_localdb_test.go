package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// reachableDir is a new directory that a server run as another user (the
// postgres user, when tests run as root) can reach, as localdb's data
// directory usually is; t.TempDir's are private to root, and localdb would
// quietly use a directory of its own instead.
func reachableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cli-localdb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// localdb deletes and recreates its data directory. Given one that holds
// anything but a stopped PostgreSQL cluster — files of the user's, a file, the
// working directory (an empty --dir), the cluster of a server still running
// there — it refuses (exit 2) and deletes nothing. It used to delete them all.
func TestLocalDBRefusesADirectoryItWouldDestroy(t *testing.T) {
	unsetenv(t, "DATABASE_URL") // else localdb starts no server and touches no directory
	base := reachableDir(t)
	keep := func(dir string) string { // a file the user cares about
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "notes.txt")
		if err := os.WriteFile(f, []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}

	files := filepath.Join(base, "project")
	notes := keep(files)
	running := filepath.Join(base, "running")
	keep(running)
	// A cluster whose server is running: a process named postgres stands in for
	// the postmaster.
	if err := os.WriteFile(filepath.Join(running, "PG_VERSION"), []byte("16\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(running, "postmaster.pid"), fmt.Appendf(nil, "%d\n%s\n0\n5432\n", standInPostmaster(t, running), running), 0o600); err != nil {
		t.Fatal(err)
	}
	// Stopped clusters localdb did not make: the one `make run` keeps its
	// demo data in (marked by its starts), and another PostgreSQL's (no
	// password file). localdb used to delete both.
	demo := filepath.Join(base, "demo")
	keep(demo)
	system := filepath.Join(base, "system")
	keep(system)
	for name, dir := range map[string]string{"PG_VERSION": demo, "router.password": demo, "router.kept": demo} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(system, "PG_VERSION"), []byte("16\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(base, "cwd")
	keep(cwd)
	t.Chdir(cwd)

	for _, c := range []struct{ dir, want string }{
		{files, "not a PostgreSQL data directory"},
		{notes, "not a directory"},
		{running, "is running"},
		{demo, "keeps between starts"},
		{system, "did not make"},
		{"", "--dir is empty"},
	} {
		if err := os.Unsetenv("DATABASE_URL"); err != nil { // a localdb that ran has set it
			t.Fatal(err)
		}
		var code int
		_, stderr := captureOutput(t, func() {
			code = run(context.Background(), []string{"localdb", "--dir", c.dir, "--", "true"})
		})
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("localdb --dir %q: exit code %d, stderr:\n%s\nwant exit code 2 saying %q", c.dir, code, stderr, c.want)
		}
	}
	for _, dir := range []string{files, running, cwd, demo, system} {
		if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "precious" {
			t.Errorf("%s/notes.txt after localdb: %q, %v; want it untouched", dir, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(running, "postmaster.pid")); err != nil {
		t.Errorf("the running server's postmaster.pid: %v", err)
	}
}

// localdb exits with its command's status, so a script or CI sees the
// command's verdict (a usage error of its own, 2, is not turned into 1).
func TestLocalDBExitsWithItsCommandsStatus(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://unused") // set: localdb runs the command as is
	var code int
	_, stderr := captureOutput(t, func() {
		code = run(context.Background(), []string{"localdb", "--", "sh", "-c", "exit 3"})
	})
	if code != 3 || !strings.Contains(stderr, "status 3") {
		t.Fatalf("localdb -- sh -c 'exit 3': exit code %d, stderr %q; want 3", code, stderr)
	}
}

// Told to stop (SIGTERM, Ctrl-C), localdb asks its command to stop (SIGTERM)
// rather than killing it, so the command can stop what it runs in turn (go
// test its test binaries) before the server goes. The command is this test
// binary, as TestLocalDBHelperCommand.
func TestLocalDBAsksItsCommandToStop(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://unused")
	dir := t.TempDir()
	ready, stopped := filepath.Join(dir, "ready"), filepath.Join(dir, "stopped")
	if err := syscall.Mkfifo(ready, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CLI_LOCALDB_HELPER_READY", ready)
	t.Setenv("CLI_LOCALDB_HELPER_STOPPED", stopped)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"localdb", "--", os.Args[0], "-test.run=^TestLocalDBHelperCommand$"})
	}()
	f, err := os.Open(ready) // blocks until the command opens it to write
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	if err != nil || line != "ready\n" {
		t.Fatalf("the command's ready line: %q, %v", line, err)
	}
	cancel() // as main's signal handler does
	// The command exits 0 once asked to stop: localdb exits with its status
	// (TestLocalDBStoppedBySignalKeepsItsCommandsVerdict).
	if code := <-done; code != 0 {
		t.Errorf("localdb stopped by a signal, its command exiting 0 when asked: exit code %d, want 0", code)
	}
	if b, err := os.ReadFile(stopped); err != nil || string(b) != "asked\n" {
		t.Fatalf("the command was not asked to stop (it was killed): %q, %v", b, err)
	}
}

// TestLocalDBHelperCommand is the command of TestLocalDBAsksItsCommandToStop
// (it does nothing in an ordinary run): once its SIGTERM handler is
// installed it says so, then on SIGTERM it writes down that it was asked to
// stop and exits.
func TestLocalDBHelperCommand(t *testing.T) {
	ready, stopped := os.Getenv("CLI_LOCALDB_HELPER_READY"), os.Getenv("CLI_LOCALDB_HELPER_STOPPED")
	if ready == "" || stopped == "" {
		return // an ordinary run: only TestLocalDBAsksItsCommandToStop runs it, as its command
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	if err := os.WriteFile(ready, []byte("ready\n"), 0); err != nil {
		t.Fatal(err)
	}
	<-term
	if err := os.WriteFile(stopped, []byte("asked\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Exit(0)
}
