package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the garbage collector's target when GOGC is not set. A
// router's live heap is small (tens of MiB) while it allocates per request, so
// Go's default of 100 collects many times a second under load and takes CPU
// that the database and the providers' streams need; 400 trades a few more
// MiB of heap for that CPU (measured by `make bench`: see docs/performance.md).
const defaultGCPercent = 400

// tuneGC applies defaultGCPercent unless the operator set GOGC.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}
