package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A postmaster.pid left by a server that died (a crash, a reboot) may name
// a pid that another cluster's postgres has since — the system's PostgreSQL,
// started at boot. localdb used to refuse its --dir for it, telling the user
// to kill that other server. Found by review.
func TestCheckDataDirIgnoresAnotherClustersPostgres(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	base := t.TempDir()
	other := filepath.Join(base, "system-cluster")
	ours := filepath.Join(base, "pg-test")
	for _, d := range []string{other, ours} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "postgres")
	if err := os.Symlink(sleep, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "1000")
	cmd.Dir = other // a postmaster works in its data directory
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	if err := os.WriteFile(filepath.Join(ours, "PG_VERSION"), []byte("15\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ours, "router.password"), []byte("x\n"), 0o600); err != nil { // one localdb made
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ours, "postmaster.pid"), fmt.Appendf(nil, "%d\n%s\n0\n5432\n", pid, ours), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkDataDir(ours); err != nil {
		t.Errorf("stale postmaster.pid naming another cluster's postgres (pid %d, working in %s) refused:\n%v", pid, other, err)
		if strings.Contains(err.Error(), fmt.Sprintf("kill %d", pid)) {
			t.Errorf("and it tells the user to kill that other cluster's server")
		}
	}
}
