package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// standInPostmaster starts a process whose command is postgres (sleep, by a
// link of that name), working in dataDir as a postmaster does, stopped when t
// ends, and returns its pid: what a postmaster.pid of a running server of
// dataDir names. localdb checks the process is a postgres of that data
// directory, so this test process cannot stand in for one.
func standInPostmaster(t *testing.T, dataDir string) int {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "postgres")
	if err := os.Symlink(sleep, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "1000")
	cmd.Dir = dataDir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}
