package main

import (
	"io"
	"log/slog"
	"runtime/debug"
	"testing"
)

// docs/operations.md: `router serve` sets GOGC=1600 "unless the GOGC
// environment variable is set". An empty GOGC — `GOGC=` in a unit file, an
// env entry with an empty value in a Kubernetes manifest or Helm values left
// blank — counts as set, so the router skips its 1600; Go's runtime reads an
// empty GOGC as unset, so the collector runs at Go's default 100: about 20%
// more CPU per job than the tuned default (docs/performance.md), with nothing
// said. The router's own convention for an empty variable is "unset"
// (DATABASE_URL=, and automemlimit's GOMEMLIMIT= beside it here).
func TestEmptyGOGCKeepsTheRoutersDefault(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("AUTOMEMLIMIT", "off") // this test is about GOGC only
	old := debug.SetGCPercent(100)  // what the runtime made of GOGC="" at start
	t.Cleanup(func() { debug.SetGCPercent(old) })
	tuneGC(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GOGC set but empty: the collector runs at GOGC=%d; want the router's default %d, as for GOGC unset (Go itself reads an empty GOGC as unset)",
			got, defaultGCPercent)
	}
}
