package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Machine describes where the run happened.
type Machine struct {
	CPUs            int
	CPUModel        string
	MemTotal        string
	Kernel          string
	Go              string
	Postgres        string
	PGSettings      map[string]string
	FdatasyncMedian time.Duration // 8 KiB write + fdatasync, median of 100, in the work directory
}

func machineInfo(ctx context.Context, db *DB, dir string) Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), PGSettings: map[string]string{}}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				m.MemTotal = strings.TrimSpace(strings.TrimPrefix(l, "MemTotal:"))
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	_ = db.pool.QueryRow(ctx, "SELECT version()").Scan(&m.Postgres)
	rows, err := db.pool.Query(ctx, `SELECT name, setting FROM pg_settings WHERE name IN
		('fsync', 'synchronous_commit', 'wal_sync_method', 'full_page_writes', 'shared_buffers', 'max_connections', 'commit_delay')`)
	if err == nil {
		for rows.Next() {
			var k, v string
			if rows.Scan(&k, &v) == nil {
				m.PGSettings[k] = v
			}
		}
		rows.Close()
	}
	m.FdatasyncMedian = fdatasync(filepath.Join(dir, "fsync.test"))
	return m
}

// fdatasync times 8 KiB writes each followed by fdatasync: the floor of one
// durable commit on this disk.
func fdatasync(path string) time.Duration {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 0
	}
	defer os.Remove(path)
	defer f.Close()
	buf := make([]byte, 8192)
	var ds []time.Duration
	for i := range 100 {
		t := time.Now()
		if _, err := f.WriteAt(buf, int64(i%16)*8192); err != nil {
			return 0
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return 0
		}
		ds = append(ds, time.Since(t))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

// SortedSettings lists the PostgreSQL settings in name order.
func (m Machine) SortedSettings() []string {
	var out []string
	for k, v := range m.PGSettings {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
