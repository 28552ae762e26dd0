package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// Without GOGC the router collects at defaultGCPercent; GOGC, when set, wins.
func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "") // set (to empty): the operator's choice stands
	tuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set: GC percent %d, want it left at 100", got)
	}
	unsetenv(t, "GOGC")
	tuneGC()
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Fatalf("GOGC unset: GC percent %d, want %d", got, defaultGCPercent)
	}
}

func unsetenv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "") // restores the old value when t ends
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}
