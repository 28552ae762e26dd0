package localpg_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/routerhq/router/internal/localpg"
)

// A server that died without removing its postmaster.pid (a crash, a reboot)
// leaves a file naming a pid that another process may have since: one of the
// same user's (postgres refuses to start while that pid lives), even another
// cluster's postgres. Start removes such a file and starts; it used to fail,
// advising to delete the data. Found by review.
func TestStartRemovesAStalePostmasterPid(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := filepath.Join(tempDir(t), "data")
	c, err := localpg.Start(ctx, localpg.Options{DataDir: dir, Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	owner := fi.Sys().(*syscall.Stat_t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	postgres := filepath.Join(tempDir(t), "postgres") // a process whose command is postgres
	if err := os.Symlink(sleep, postgres); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, program string }{
		{"another program", sleep},
		{"another cluster's postgres", postgres}, // working elsewhere, as a postmaster does in its own data directory
	} {
		cmd := exec.Command(c.program, "1000")
		cmd.Dir = tempDir(t)
		if os.Geteuid() == 0 {
			// The server's user's: postgres takes a pid of another user's
			// process for a dead server's.
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: owner.Uid, Gid: owner.Gid}}
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		pidFile := fmt.Appendf(nil, "%d\n%s\n%d\n%d\n\n127.0.0.1\n  5432001         1\nready   \n",
			cmd.Process.Pid, dir, time.Now().Unix(), loopbackPort(t))
		if err := os.WriteFile(filepath.Join(dir, "postmaster.pid"), pidFile, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(dir, "postmaster.pid"), int(owner.Uid), int(owner.Gid)); err != nil {
			t.Fatal(err) // the server's, as the file its server left is
		}
		again, err := localpg.Start(ctx, localpg.Options{DataDir: dir, Durable: true})
		if err != nil {
			t.Fatalf("postmaster.pid naming %s (pid %d): %v", c.name, cmd.Process.Pid, err)
		}
		if again.URL == "" {
			t.Fatalf("postmaster.pid naming %s: no URL", c.name)
		}
		assertOwnServer(ctx, t, again)
		again.Stop()
	}
}
