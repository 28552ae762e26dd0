package localpg

import (
	"context"
	"errors"
	"fmt"
	"os"
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
