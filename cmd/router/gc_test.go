package main

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// Without GOGC the router collects at defaultGCPercent; GOGC, when set to a
// value, wins (set but empty, it is unset: TestEmptyGOGCKeepsTheRoutersDefault).
func TestTuneGC(t *testing.T) {
	keepGC(t)
	t.Setenv("GOGC", "100") // the operator's choice stands
	tuneGC(slog.New(slog.DiscardHandler))
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set: GC percent %d, want it left at 100", got)
	}
	unsetenv(t, "GOGC")
	tuneGC(slog.New(slog.DiscardHandler))
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Fatalf("GOGC unset: GC percent %d, want %d", got, defaultGCPercent)
	}
}

// Without GOMEMLIMIT the router sets a soft memory limit below the memory it
// may use (the container's limit or, without one, the machine's), so a large
// GOGC cannot grow the heap past it; GOMEMLIMIT, when set, wins.
func TestTuneGCMemoryLimit(t *testing.T) {
	keepGC(t)
	unsetenv(t, "AUTOMEMLIMIT")
	unsetenv(t, "GOMEMLIMIT")
	debug.SetMemoryLimit(math.MaxInt64)
	tuneGC(slog.New(slog.DiscardHandler))
	got := debug.SetMemoryLimit(-1)
	if got <= 0 || got == math.MaxInt64 {
		t.Fatalf("GOMEMLIMIT unset: memory limit %d, want a finite limit from the container or the machine", got)
	}

	t.Setenv("GOMEMLIMIT", "123MiB")
	debug.SetMemoryLimit(math.MaxInt64) // what the runtime would have read is not the point: tuneGC must not change it
	tuneGC(slog.New(slog.DiscardHandler))
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("GOMEMLIMIT set: memory limit changed to %d, want it left alone", got)
	}
}

// keepGC restores the process's GC percent and memory limit when t ends.
func keepGC(t *testing.T) {
	t.Helper()
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	})
	debug.SetGCPercent(gc)
}

func unsetenv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "") // restores the old value when t ends
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}
