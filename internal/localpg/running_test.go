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
// PostgreSQL server's working in that data directory, as a postmaster does:
// a stale file whose pid another process now has (pid 1 after a reboot, which
// root's signal 0 always reaches; this process; its parent; any other
// program; another cluster's postgres, the system's say) does not, and
// localdb used to refuse the directory saying `kill 1`, or to kill that other
// cluster's server. Found by review.
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
	for _, name := range []string{"postgres", "other"} {
		if err := os.Symlink(sleep, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	start := func(name, cwd string) int { // a process whose command is name, working in cwd
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, name), "1000")
		cmd.Dir = cwd
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd.Process.Pid
	}
	newDir := func(name string) string {
		t.Helper()
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	for i, c := range []struct {
		name string
		pid  func(data string) int
		want bool
	}{
		{"a postgres process working in the data directory", func(data string) int { return start("postgres", data) }, true},
		{"another cluster's postgres", func(string) int { return start("postgres", newDir("other-cluster")) }, false},
		{"another program", func(data string) int { return start("other", data) }, false},
		{"pid 1", func(string) int { return 1 }, false},
		{"this process", func(string) int { return os.Getpid() }, false},
		{"this process's parent", func(string) int { return os.Getppid() }, false},
	} {
		data := newDir(fmt.Sprintf("data-%d", i))
		pid := c.pid(data)
		if err := os.WriteFile(filepath.Join(data, "postmaster.pid"), fmt.Appendf(nil, "%d\n%s\n0\n5432\n", pid, data), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, ok := localpg.RunningServer(data); ok != c.want || ok && got != pid {
			t.Errorf("postmaster.pid naming %s (pid %d): running %v (pid %d), want %v", c.name, pid, ok, got, c.want)
		}
	}
}

// The data directory may be given relative to the working directory
// (router localdb --dir .local/pg-test): its server is still found.
func TestRunningServerOfARelativeDataDir(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "postgres")
	if err := os.Symlink(sleep, link); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "pg-test")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "1000")
	cmd.Dir = data
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if err := os.WriteFile(filepath.Join(data, "postmaster.pid"), fmt.Appendf(nil, "%d\n%s\n0\n5432\n", cmd.Process.Pid, data), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if pid, ok := localpg.RunningServer("pg-test"); !ok || pid != cmd.Process.Pid {
		t.Errorf("postmaster.pid of ./pg-test naming its server (pid %d): running %v (pid %d)", cmd.Process.Pid, ok, pid)
	}
}
