package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// runMarkEnv names the environment variable localdb gives its command, with a
// value of its own per run: every process the command starts inherits it, so
// once the command has exited, whatever it left running can be found — even
// re-parented to PID 1, as go test's test binaries are when `go`, told to
// stop (SIGTERM), dies at once without stopping them.
const runMarkEnv = "ROUTER_LOCALDB_RUN"

// newRunMark is the VAR=VALUE of runMarkEnv for one run.
func newRunMark() string { return runMarkEnv + "=" + rand.Text() }

// markedProcesses lists the processes, other than this one, whose environment
// holds mark. A process that exec'd with a cleared environment escapes it; a
// zombie has none left (it is gone).
func markedProcesses(mark string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := append([]byte(mark), 0)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil { // gone, or another user's
			continue
		}
		if bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stopLeftovers stops the processes that localdb's command (name) left
// running, before the database they use is stopped: SIGTERM, then SIGKILL
// for those still running after budget.
func stopLeftovers(mark, name string, budget time.Duration) {
	left := markedProcesses(mark)
	if len(left) == 0 {
		// A process caught in the middle of an exec has no environment to
		// read for a moment (the new program's is not yet in place): look
		// once more before concluding that nothing was left running. Seen on
		// a loaded machine: a shell's `sleep 1000 &` escaped the first look.
		time.Sleep(20 * time.Millisecond)
		if left = markedProcesses(mark); len(left) == 0 {
			return
		}
	}
	fmt.Fprintf(os.Stderr, "router localdb: %s left processes running (pids %v): stopping them (SIGTERM) before the database\n", name, left)
	signalled := map[int]bool{}
	deadline := time.Now().Add(budget)
	for len(left) > 0 && time.Now().Before(deadline) {
		for _, pid := range left { // and what they start meanwhile
			if !signalled[pid] {
				signalled[pid] = true
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
		}
		time.Sleep(20 * time.Millisecond)
		left = markedProcesses(mark)
	}
	for try := 0; len(left) > 0 && try < 100; try++ {
		if try == 0 {
			fmt.Fprintf(os.Stderr, "router localdb: processes %v still running %s after SIGTERM: killing them\n", left, budget)
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
		left = markedProcesses(mark)
	}
}
