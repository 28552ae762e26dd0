package main

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// defaultGCPercent is the garbage collector's target when GOGC is not set. A
// router's live heap is small (tens of MiB) while it allocates tens of KiB per
// request, so Go's default of 100 collects many times a second under load and
// takes CPU that the database and the providers' streams need. 1600 lets the
// heap grow to about 17 times the live heap between collections (at 64
// callers in `make bench`: 180 MiB resident instead of 84 at 400) for about 8%
// less CPU per job than 400 (docs/performance.md); memoryLimitRatio keeps that
// growth inside the memory the process may use.
const defaultGCPercent = 1600

// memoryLimitRatio is the share of the container's memory limit (cgroup v1 or
// v2), or of the machine's memory when there is none, that becomes Go's soft
// memory limit when GOMEMLIMIT is not set: near it the collector runs as often
// as it must, whatever GOGC says, so a large GOGC cannot push the process out
// of its container.
const memoryLimitRatio = 0.9

// tuneGC applies defaultGCPercent unless the operator set GOGC to a value, and
// a soft memory limit unless the operator set GOMEMLIMIT (or AUTOMEMLIMIT=off;
// a number in AUTOMEMLIMIT replaces memoryLimitRatio). A limit it cannot find
// is logged and otherwise ignored: the router runs, only without the limit.
func tuneGC(log *slog.Logger) {
	// An empty GOGC (`GOGC=` in a unit file, a blank Helm value) is unset,
	// as Go's runtime reads it (100) and as GOMEMLIMIT= is read beside it:
	// counted as set, it would leave the collector at 100.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	limit, err := memlimit.Set(memlimit.WithRatio(memoryLimitRatio),
		memlimit.WithProvider(memlimit.ApplyFallback(memlimit.FromCgroup, memlimit.FromSystem)))
	if err != nil {
		log.Warn("no soft memory limit for the garbage collector; set GOMEMLIMIT to choose one", "err", err)
		return
	}
	log.Debug("garbage collector tuned", "gogc_env", os.Getenv("GOGC"), "memory_limit_bytes", limit)
}
