package localpg

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// errPortTaken is a server start that failed because another program has
// its port: the server could not bind it, or another server answers there.
var errPortTaken = errors.New("the port was taken by another program")

// startError is a server start's failure with what the server logged.
type startError struct {
	err     error
	logPath string // "": logged is a program's output
	logged  string // this start's part of the server log
}

func (e *startError) Error() string {
	if strings.TrimSpace(e.logged) == "" {
		return fmt.Sprintf("%v (nothing in the server log %s)", e.err, e.logPath)
	}
	if e.logPath == "" { // a program's output, not the server log's (postgres --single)
		return fmt.Sprintf("%v\n%s", e.err, lastLines([]byte(e.logged), 20))
	}
	return fmt.Sprintf("%v\nserver log %s:\n%s", e.err, e.logPath, lastLines([]byte(e.logged), 20))
}

func (e *startError) Unwrap() error { return e.err }

// logSince is what the log at path holds from offset on.
func logSince(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// bindFailed reports whether a server log says the server could not listen
// on its port.
func bindFailed(logged string) bool {
	return strings.Contains(logged, "could not bind") || strings.Contains(logged, "Address already in use")
}

var (
	otherVersion = regexp.MustCompile(`initialized by PostgreSQL version (\d+(?:\.\d+)?), which is not compatible with this version (\d+(?:\.\d+)?)`)
	otherServer  = regexp.MustCompile(`Is another postmaster \(PID (\d+)\) running`)
)

// withAdvice adds to a start's failure (err, after tries ports) what to do
// about it, by what the server logged. Deleting the data directory is the
// advice only for a cluster this start did not make (existing) that fails
// for no known reason: perhaps one left half-built.
func withAdvice(err error, dataDir string, existing bool, tries int) error {
	var se *startError
	logged := ""
	if errors.As(err, &se) {
		logged = se.logged
	}
	switch {
	case errors.Is(err, errPortTaken):
		return fmt.Errorf("%w\nanother program took each of the %d free ports PostgreSQL was given before it could listen there: "+
			"start again; if this keeps happening, see what takes loopback ports (ss -ltnp)", err, tries)
	case strings.Contains(logged, "lock file") && strings.Contains(logged, "already exists"):
		pid := "its pid"
		if m := otherServer.FindStringSubmatch(logged); m != nil {
			pid = m[1]
		}
		return fmt.Errorf("%w\nanother PostgreSQL server (pid %s) is running on the data directory %s: use it, or stop it first (kill %s)",
			err, pid, dataDir, pid)
	}
	if m := otherVersion.FindStringSubmatch(logged); m != nil {
		made, have := majorVersion(m[1]), majorVersion(m[2])
		convert := fmt.Sprintf("or upgrade it to %s with pg_upgrade", have)
		if !olderVersion(made, have) {
			// pg_upgrade only upgrades: a cluster of a newer PostgreSQL
			// (made on another machine, or before a downgrade) is read
			// only by that version, whose pg_dump can move its data.
			convert = fmt.Sprintf("or dump it with PostgreSQL %s's pg_dump and restore the dump into a new cluster", made)
		}
		return fmt.Errorf("%w\nthe PostgreSQL cluster in %s was made by PostgreSQL %s, and this machine has PostgreSQL %s: "+
			"install PostgreSQL %s (apt-get install postgresql-%s; from apt.postgresql.org if your distribution lacks it) to use it as it is, %s; "+
			"or, if it holds nothing you need, delete it (rm -rf %s) and start again: a new one is created",
			err, dataDir, made, have, made, made, convert, dataDir)
	}
	if existing {
		// A cluster this package did not just make: perhaps one left
		// half-built by an older router whose first start was stopped
		// during initdb (it initialised in place).
		return fmt.Errorf("%w\nthe PostgreSQL cluster in %s does not start: if it holds nothing you need (a development database, "+
			"perhaps left incomplete by a first start that was interrupted), delete the directory (rm -rf %s) and start again; "+
			"a new one is created", err, dataDir, dataDir)
	}
	return err
}

// majorVersion is the major version of a PostgreSQL version: its first
// number from 10 on (15.18: 15), its first two before (9.6.24: 9.6).
func majorVersion(v string) string {
	parts := strings.Split(v, ".")
	if n, err := strconv.Atoi(parts[0]); err == nil && n < 10 && len(parts) > 1 {
		return parts[0] + "." + parts[1]
	}
	return parts[0]
}

// olderVersion reports whether the major version a is older than b (9.6
// than 15).
func olderVersion(a, b string) bool {
	num := func(v string) (int, int) {
		major, minor, _ := strings.Cut(v, ".")
		x, _ := strconv.Atoi(major)
		y, _ := strconv.Atoi(minor)
		return x, y
	}
	ax, ay := num(a)
	bx, by := num(b)
	return ax < bx || ax == bx && ay < by
}
