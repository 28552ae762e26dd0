package localpg

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// SetOutsideRoot moves where unreachable data directories are kept, and
// returns the restore.
func SetOutsideRoot(dir string) (restore func()) {
	before := outsideRoot
	outsideRoot = dir
	return func() { outsideRoot = before }
}

// SetFreePort replaces how a start picks the port of its server, and returns
// the restore.
func SetFreePort(f func() (int, error)) (restore func()) {
	before := freePort
	freePort = f
	return func() { freePort = before }
}

// SetPGLibRoot moves where the installed PostgreSQL versions are looked for,
// and returns the restore.
func SetPGLibRoot(dir string) (restore func()) {
	before := pgLibRoot
	pgLibRoot = dir
	return func() { pgLibRoot = before }
}

// BinDirFor is the binary directory a start uses for the cluster in dataDir,
// bin when its version is not installed.
func BinDirFor(dataDir, bin string) string { return binDirFor(dataDir, bin) }

// LockDataDir takes the lock a start of dataDir holds, as another start
// under way would, and returns its release.
func LockDataDir(dataDir string) (unlock func(), err error) {
	l, err := lockDataDir(context.Background(), dataDir, false)
	if err != nil {
		return nil, err
	}
	return l.unlock, nil
}

// StartAdvice is the error of a start of an existing cluster in dataDir whose
// server logged logged, its port taken or not.
func StartAdvice(logged string, portTaken bool, dataDir string) string {
	err := errors.New("postgres exited during start-up: exit status 1")
	if portTaken {
		err = fmt.Errorf("%w (%w)", err, errPortTaken)
	}
	return withAdvice(&startError{err: err, logPath: dataDir + ".log", logged: logged}, dataDir, true, portTries).Error()
}

// TookOver is closed once an attached cluster has started its server again
// (its starter stopped it); nil for a cluster that does not watch its server.
func TookOver(c *Cluster) <-chan struct{} { return c.tookOver }

// ClaimDataDir is a start's check (and, as root, claim) of the ownership of
// dataDir, by a server running as cred (nil: as this process).
func ClaimDataDir(dataDir string, cred *syscall.Credential) error {
	return claimDataDir(dataDir, cred, "postgres")
}

// MaxServerLogBytes is the size past which a start rotates the server log.
const MaxServerLogBytes = maxServerLogBytes

// NextStart is closed once the watch of c has started its server again (it
// had exited, or, attached, its starter stopped it); take it before what
// stops the server.
func NextStart(c *Cluster) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.restarted
}

// Watching reports whether a watch keeps the server of c running.
func Watching(c *Cluster) bool {
	c.mu.Lock()
	done := c.watchDone
	c.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// WatchEnded is closed when the watch of c ends (Stop, Restart, or a
// server that was shut down cleanly); nil when none runs.
func WatchEnded(c *Cluster) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watchDone
}
