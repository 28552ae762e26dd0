package localpg

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// keptFile marks a data directory whose data is kept between starts: a start
// that is not Fresh (`make run`, database_url: embedded) writes it, so that
// `router localdb`, which deletes and recreates its directory, can tell the
// demo database from its own throwaway clusters (KeptData).
const keptFile = "router.kept"

// markKept writes keptFile in dataDir (cred's user's, mode 0600). Its loss
// costs only the protection, so a failure is the caller's to log, not to
// fail the start for.
func markKept(dataDir string, cred *syscall.Credential) error {
	path := filepath.Join(dataDir, keptFile)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	return writePrivate(path, []byte("Data kept between starts of the router's embedded PostgreSQL (make run, database_url: embedded).\n"+
		"router localdb refuses to delete this directory; delete it yourself to start again from nothing.\n"), cred)
}

// KeptData reports whether dataDir is the data directory of a cluster whose
// data a start keeps between runs (`make run`'s .local/pg): it holds the
// mark a start that is not Fresh writes (markKept).
func KeptData(dataDir string) bool {
	_, err := os.Stat(filepath.Join(dataDir, keptFile))
	return err == nil
}

// MadeByRouter reports whether the cluster in dataDir was made by the
// router's embedded PostgreSQL: it holds the password file every cluster
// made since clusters had a password has. Another PostgreSQL's data
// directory (the system's, stopped) has none.
func MadeByRouter(dataDir string) bool {
	_, err := os.Stat(filepath.Join(dataDir, passwordFile))
	return !errors.Is(err, os.ErrNotExist)
}
