package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times (100 on every
// Linux architecture Go supports; sysconf is out of reach without cgo).
const clockTicks = 100

// CPUSplit is CPU time in seconds, over all CPUs, split by who spent it: what
// explains a throughput ratio when the machine is saturated (the router,
// PostgreSQL, the load generator and the mock share it).
type CPUSplit struct {
	Total    float64 // elapsed CPU capacity: wall time × CPUs (/proc/stat, idle included)
	Busy     float64 // all but idle and iowait (/proc/stat)
	Postgres float64 // processes named postgres (/proc/<pid>/stat)
	// PostgresBackground is the part of Postgres spent by the server's own
	// processes — postmaster, checkpointer, WAL writer, autovacuum — rather
	// than by the backends serving clients: work that lands in whichever run is
	// active when it happens.
	PostgresBackground float64
	// procs is, in a sample, each postgres process's CPU so far, so that Sub
	// counts a process that exited between two samples as nothing rather
	// than as minus its earlier CPU (autovacuum workers come and go), and one
	// that started between them with all of its CPU.
	procs map[int]pgProc
	Bench float64 // this process: the load generator and the mock
}

// sampleCPU reads the machine's CPU counters so far.
func sampleCPU() (CPUSplit, error) {
	var s CPUSplit
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	if s.Total, s.Busy, err = parseProcStat(string(b)); err != nil {
		return s, err
	}
	pids, err := os.ReadDir("/proc")
	if err != nil {
		return s, err
	}
	for _, e := range pids {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		if comm, secs, ok := parsePidStat(string(b)); ok && comm == "postgres" {
			pid, _ := strconv.Atoi(e.Name())
			title, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			s.addProc(pid, pgProc{secs: secs, background: err == nil && pgBackground(string(title))})
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return s, err
	}
	s.Bench = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	return s, nil
}

// parseProcStat returns all and busy (not idle, not iowait) CPU seconds from
// /proc/stat's aggregate "cpu" line.
func parseProcStat(stat string) (total, busy float64, err error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var all, idle int64
	for i, v := range f[1:] {
		if i >= 8 { // guest and guest_nice are already counted in user and nice
			break
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: field %d of %q: %w", i+1, line, err)
		}
		all += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	return float64(all) / clockTicks, float64(all-idle) / clockTicks, nil
}

// parsePidStat returns a process's command name and its user + system CPU
// seconds from /proc/<pid>/stat (the name may hold spaces and parentheses).
func parsePidStat(stat string) (comm string, secs float64, ok bool) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	f := strings.Fields(stat[end+1:])
	if len(f) < 13 { // state is f[0]; utime and stime are fields 14 and 15 of the line
		return "", 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	k, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return stat[open+1 : end], float64(u+k) / clockTicks, true
}

// pgProc is one postgres process in a sample.
type pgProc struct {
	secs       float64
	background bool
}

func (s *CPUSplit) addProc(pid int, p pgProc) {
	if s.procs == nil {
		s.procs = map[int]pgProc{}
	}
	s.procs[pid] = p
	s.Postgres += p.secs
	if p.background {
		s.PostgresBackground += p.secs
	}
}

// Sub is s minus o. PostgreSQL's share is summed per process: one present in
// both samples counts its difference, one new in s all of its CPU, one gone
// from s nothing.
func (s CPUSplit) Sub(o CPUSplit) CPUSplit {
	d := CPUSplit{Total: s.Total - o.Total, Busy: s.Busy - o.Busy, Bench: s.Bench - o.Bench}
	for pid, p := range s.procs {
		if before, ok := o.procs[pid]; ok {
			p.secs -= before.secs
		}
		d.Postgres += p.secs
		if p.background {
			d.PostgresBackground += p.secs
		}
	}
	return d
}

// pgBackground reports whether a postgres process's title (its
// /proc/<pid>/cmdline, which PostgreSQL rewrites) is the postmaster's or one
// of the server's own processes' rather than a client backend's
// ("postgres: <user> <database> <host> <state>").
func pgBackground(cmdline string) bool {
	title, ok := strings.CutPrefix(strings.TrimRight(strings.ReplaceAll(cmdline, "\x00", " "), " "), "postgres: ")
	if !ok {
		return true // the postmaster: its command line as started
	}
	for _, p := range []string{"checkpointer", "background writer", "walwriter", "autovacuum", "logical replication",
		"stats collector", "archiver", "walsender", "walreceiver", "startup", "parallel worker"} {
		if strings.HasPrefix(title, p) {
			return true
		}
	}
	return false
}

// Per job, in milliseconds, from a run's counters and CPU split; false where
// the run has no such measure. The report's tables format them with cell.

func routerPerJob(r OverheadRow) (float64, bool) { return 1000 * r.PerJob.CPUSeconds, r.HaveCounter }

func pgPerJob(r OverheadRow) (float64, bool) {
	return perRequest(r, func(c CPUSplit) float64 { return c.Postgres })
}

func pgBackgroundPerJob(r OverheadRow) (float64, bool) {
	return perRequest(r, func(c CPUSplit) float64 { return c.PostgresBackground })
}

func harnessPerJob(r OverheadRow) (float64, bool) {
	return perRequest(r, func(c CPUSplit) float64 { return c.Bench })
}

// perRequest is f of the run's CPU split in milliseconds per request.
func perRequest(r OverheadRow, f func(CPUSplit) float64) (float64, bool) {
	if r.CPU == nil || r.N == 0 {
		return 0, false
	}
	return 1000 * f(*r.CPU) / float64(r.N), true
}

// cell formats a per-job figure for a table, "–" where there is none.
func cell(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

// busyShare is the machine's busy share over the run, "–" unmeasured.
func busyShare(r OverheadRow) string {
	if r.CPU == nil || r.CPU.Total <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*r.CPU.Busy/r.CPU.Total)
}
