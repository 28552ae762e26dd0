package localpg

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// dirOwner is the owner (uid) of dir, and whether dir holds anything.
func dirOwner(dir string) (uid uint32, empty bool, err error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, false, err
	}
	f, err := os.Open(dir)
	if err != nil {
		return fi.Sys().(*syscall.Stat_t).Uid, false, nil // cannot look inside: not ours to empty either
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return fi.Sys().(*syscall.Stat_t).Uid, len(names) == 0, nil
}

// userName is the name of uid, or "uid N" when it has none.
func userName(uid uint32) string {
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		return u.Username
	}
	return "uid " + strconv.FormatUint(uint64(uid), 10)
}

// serverUID is the user the server runs as: cred's, or this process's.
func serverUID(cred *syscall.Credential) uint32 {
	if cred != nil {
		return cred.Uid
	}
	return uint32(os.Geteuid())
}

// serversDir reports whether dataDir belongs to the user the server runs as.
func serversDir(dataDir string, cred *syscall.Credential) bool {
	uid, _, err := dirOwner(dataDir)
	return err == nil && uid == serverUID(cred)
}

// claimDataDir makes dataDir the server's: the server's user (cred, nil: this
// process's) must own it. As root it gives the server's user a directory that
// this start just created, an empty one, or root's own; never another user's
// cluster or files (a root CLI command in another user's clone would take
// that user's running cluster away from it, and leave a directory the user
// can no longer start, nor delete). Another user's is refused, with what to
// do; so is, without root, one the server's user does not own (postgres
// refuses it, saying only "Permission denied").
func claimDataDir(dataDir string, cred *syscall.Credential, serverUser string) error {
	uid, empty, err := dirOwner(dataDir)
	if err != nil {
		return fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	want := serverUID(cred)
	switch {
	case uid == want:
		return nil
	case cred != nil && (empty || uid == 0):
		if err := os.Chown(dataDir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("give %s to user %s: %w", dataDir, serverUser, err)
		}
		return nil
	case cred == nil && empty:
		return nil // initCluster replaces it with one of ours
	}
	owner := userName(uid)
	if cred != nil {
		return fmt.Errorf("%w: %s belongs to %s (uid %d), not %s, the user the server runs as, and no server of it is running: "+
			"run this command as %s, without sudo",
			errForeignDir, dataDir, owner, uid, serverUser, owner)
	}
	return fmt.Errorf("%w: %s belongs to %s (uid %d), not you (uid %d), and PostgreSQL runs only on a data directory of its own user: "+
		"run this command as %s, or take the directory back (sudo chown -R $(id -u):$(id -g) %s)",
		errForeignDir, dataDir, owner, uid, want, owner, dataDir)
}

// errForeignDir is a start's refusal of a data directory another user owns.
var errForeignDir = errors.New("the data directory is another user's")
