package localpg_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/localpg"
)

// The server log beside the data directory was appended to by every start
// and never shortened. A start that finds it past the bound renames it to
// .log.1 (replacing an older one) and begins a new one; a log under the
// bound is appended to.
func TestStartRotatesALargeServerLog(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data := filepath.Join(tempDir(t), "data")
	logPath := data + ".log"
	writeFile(t, logPath+".1", "AN OLDER ROTATION\n")
	bigLog(t, logPath, "BEFORE THE ROTATION\n")

	c, err := localpg.Start(ctx, localpg.Options{DataDir: data, Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	cur := readFile(t, logPath)
	if len(cur) > localpg.MaxServerLogBytes || strings.Contains(cur, "BEFORE THE ROTATION") {
		t.Fatalf("the log past the bound was not rotated: %d bytes", len(cur))
	}
	if !strings.Contains(cur, "ready to accept connections") {
		t.Errorf("the new log does not hold this start's server output:\n%s", cur)
	}
	if prev := readFile(t, logPath+".1"); !strings.HasPrefix(prev, "BEFORE THE ROTATION\n") {
		t.Errorf(".log.1 is not the rotated log: it begins %q", prev[:min(len(prev), 40)])
	}

	// Under the bound: appended to, .log.1 left as it is.
	before1 := fileSize(t, logPath+".1")
	c, err = localpg.Start(ctx, localpg.Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	if again := readFile(t, logPath); !strings.HasPrefix(again, cur) || len(again) == len(cur) {
		t.Errorf("a log under the bound was not appended to (%d bytes, then %d)", len(cur), len(again))
	}
	if fileSize(t, logPath+".1") != before1 {
		t.Error("a start under the bound rotated the log again")
	}
}

// A failed start reports its own part of the server log, by which its advice
// is chosen, also when the log was rotated on that start: not the old log's
// lines (here one that would advise stopping another server).
func TestFailedStartAfterRotationReportsItsOwnLog(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/lib/postgresql/14/bin/postgres"); err == nil {
		t.Skip("PostgreSQL 14 is installed: the cluster would start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data := filepath.Join(tempDir(t), "data")
	c, err := localpg.Start(ctx, localpg.Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	writeFile(t, filepath.Join(data, "PG_VERSION"), "14\n")
	const old = "FATAL:  lock file \"postmaster.pid\" already exists\nHINT:  Is another postmaster (PID 4242) running in data directory?\n"
	bigLog(t, data+".log", old)
	c, err = localpg.Start(ctx, localpg.Options{DataDir: data})
	if err == nil {
		c.Stop()
		t.Fatal("a cluster of PostgreSQL 14 started")
	}
	if !strings.Contains(err.Error(), "made by PostgreSQL 14") || strings.Contains(err.Error(), "4242") {
		t.Errorf("the error is not this start's:\n%v", err)
	}
	if fileSize(t, data+".log") > localpg.MaxServerLogBytes {
		t.Error("the log past the bound was not rotated")
	}
}

// bigLog writes a server log at path that begins with head and is one byte
// past the bound (the rest a hole, no disk used).
func bigLog(t *testing.T, path, head string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(localpg.MaxServerLogBytes + 1); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimRight(b, "\x00"))
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
