package localpg_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/routerhq/router/internal/localpg"
)

// A postmaster.pid names a running server only when its pid is a live
// PostgreSQL server's: a stale file whose pid another process now has (pid 1
// after a reboot, which root's signal 0 always reaches; this process; its
// parent; any other program) does not, and localdb used to refuse the
// directory saying `kill 1`. Found by review.
func TestRunningServerIsAPostgresProcess(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	start := func(name string) int { // a process whose command is name
		t.Helper()
		link := filepath.Join(bin, name)
		if err := os.Symlink(sleep, link); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(link, "1000")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd.Process.Pid
	}
	postgres, other := start("postgres"), start("other")
	for _, c := range []struct {
		name string
		pid  int
		want bool
	}{
		{"a postgres process", postgres, true},
		{"another program", other, false},
		{"pid 1", 1, false},
		{"this process", os.Getpid(), false},
		{"this process's parent", os.Getppid(), false},
	} {
		data := filepath.Join(dir, fmt.Sprint(c.pid))
		if err := os.Mkdir(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "postmaster.pid"), fmt.Appendf(nil, "%d\n%s\n0\n5432\n", c.pid, data), 0o600); err != nil {
			t.Fatal(err)
		}
		if pid, ok := localpg.RunningServer(data); ok != c.want || ok && pid != c.pid {
			t.Errorf("postmaster.pid naming %s (pid %d): running %v (pid %d), want %v", c.name, c.pid, ok, pid, c.want)
		}
	}
}
