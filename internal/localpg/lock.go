package localpg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrInUse is a Fresh start's refusal of a data directory that another start
// is setting up, or whose server is running: Fresh would delete it.
var ErrInUse = errors.New("data directory in use")

// dirLock is an exclusive lock on a data directory, held by one Start from
// before it looks for a running server until its own accepts connections:
// two starts of one directory (two CLI commands, `make run` and a command)
// neither initialise it together nor start two servers on it. It is a flock
// on a file beside the directory (its name with .lock appended), removed on
// unlock.
type dirLock struct {
	f    *os.File
	path string
}

// lockPollInterval is how often a start waiting for another start's lock on
// the same data directory tries again.
const lockPollInterval = 50 * time.Millisecond

// lockDataDir takes the lock of dataDir. With wait, it waits until the start
// that holds it is done (or ctx ends); without, a held lock is ErrInUse.
func lockDataDir(ctx context.Context, dataDir string, wait bool) (*dirLock, error) {
	path := dataDir + ".lock"
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if errors.Is(err, fs.ErrPermission) {
			return nil, lockRefused(dataDir, path, err)
		}
		if err != nil {
			return nil, fmt.Errorf("lock the data directory %s: %w", dataDir, err)
		}
		if err := flock(ctx, f, wait); err != nil {
			f.Close()
			if errors.Is(err, ErrInUse) {
				return nil, fmt.Errorf("%s: %w by another start of it (make run, router localdb, a test), under way", dataDir, ErrInUse)
			}
			return nil, fmt.Errorf("lock the data directory %s: %w", dataDir, err)
		}
		// The holder before us removed the file as it unlocked: a lock on a
		// removed file locks nothing, take the lock of the file now there.
		var held, named syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Stat(path, &named) == nil &&
			held.Dev == named.Dev && held.Ino == named.Ino {
			return &dirLock{f: f, path: path}, nil
		}
		f.Close()
	}
}

func flock(ctx context.Context, f *os.File, wait bool) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return err
		case !wait:
			return ErrInUse
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lockPollInterval):
		}
	}
}

// unlock removes the lock file, then releases the lock: a start waiting on
// the removed file sees it gone and takes the lock of a new one.
func (l *dirLock) unlock() {
	if l == nil {
		return
	}
	_ = os.Remove(l.path)
	l.f.Close()
}

// lockRefused is the error of a start that may not create (or open) the
// lock file of dataDir at path (err: EACCES, EPERM): the directory holding
// it, or a lock file left there, is another user's — typically a project's
// .local made by a start as root (`sudo make run`), after which the user's
// own `make run` failed saying only "permission denied". It says whose it
// is, and what to do.
func lockRefused(dataDir, path string, err error) error {
	blocker := filepath.Dir(path)
	if _, serr := os.Lstat(path); serr == nil {
		blocker = path // a lock file left by a start as another user
	}
	fi, serr := os.Stat(blocker)
	if serr != nil {
		return fmt.Errorf("lock the data directory %s: %w (and %s cannot be examined: %v): "+
			"give a data directory in a directory of yours", dataDir, err, blocker, serr)
	}
	uid := fi.Sys().(*syscall.Stat_t).Uid
	owner, me := userName(uid), uint32(os.Geteuid())
	if uid == me {
		return fmt.Errorf("lock the data directory %s: %w (%s is yours but not writable: make it writable, chmod u+w %s)",
			dataDir, err, blocker, blocker)
	}
	since, runAs := "a start as "+owner, "as "+owner
	if uid == 0 {
		since, runAs = "a start as root (sudo make run, say)", "as root (with sudo)"
	}
	return fmt.Errorf("lock the data directory %s: %w: %s belongs to %s (uid %d), not you (uid %d), probably since %s: "+
		"run this command %s, or, if %s is yours (your project's), take it back (sudo chown -R $(id -u):$(id -g) %s) and start again",
		dataDir, err, blocker, owner, uid, me, since, runAs, filepath.Dir(path), filepath.Dir(path))
}
