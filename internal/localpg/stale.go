package localpg

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// postmasterOf reports the pid of the live server of dataDir, as its
// postmaster.pid names it: the process must be a postgres working in dataDir
// (livePostmaster), not merely one with the pid a dead server had.
func postmasterOf(dataDir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || !livePostmaster(pid, dataDir) {
		return 0, false
	}
	return pid, true
}

// removeStalePidFile removes the postmaster.pid of dataDir when it names no
// live server of dataDir: the server died without removing it (a crash, a
// reboot), and postgres refuses to start while its pid is any live process
// of the same user. The caller holds the directory's lock.
func removeStalePidFile(dataDir string, log *slog.Logger) {
	path := filepath.Join(dataDir, "postmaster.pid")
	if _, err := os.Stat(path); err != nil {
		return
	}
	if pid, ok := postmasterOf(dataDir); ok {
		log.Info("a PostgreSQL server runs on this data directory but does not accept connections (starting or stopping)", "pid", pid, "dir", dataDir)
		return
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Warn("cannot remove the stale postmaster.pid of a server that is gone", "file", path, "err", err)
		return
	}
	log.Warn("removed a stale postmaster.pid: it named no running server of this data directory (one that crashed, or a reboot)", "file", path)
}

// pgLibRoot holds the Debian PostgreSQL installations, one directory per
// major version.
var pgLibRoot = "/usr/lib/postgresql"

// binDirFor is the binary directory for the cluster in dataDir: that of the
// PostgreSQL version the cluster was made by (its PG_VERSION) when that
// version is installed, else bin. A server of another major version does not
// start on the cluster.
func binDirFor(dataDir, bin string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION"))
	if err != nil {
		return bin
	}
	v := strings.TrimSpace(string(b))
	if n, err := strconv.Atoi(v); err != nil || n <= 0 {
		return bin
	}
	dir := filepath.Join(pgLibRoot, v, "bin")
	if _, err := os.Stat(filepath.Join(dir, "postgres")); err != nil {
		return bin
	}
	return dir
}
