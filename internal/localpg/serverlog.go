package localpg

import (
	"log/slog"
	"os"
)

// maxServerLogBytes bounds the server log (<datadir>.log): a start finding it
// larger renames it to <datadir>.log.1 (replacing an older one) and begins a
// new one. Every start appends to the log, and nothing else ever shortened
// it: a development cluster started for years (`make run`, every test run
// with its -count) grew it without end. Two files of about this size are
// kept at most; the part a failed start reports (its own lines) is always in
// the current one.
const maxServerLogBytes = 16 << 20

// openServerLog opens the server log at path for appending, rotated first
// when it is larger than maxServerLogBytes. A start opens it before its
// server runs, so no server of the data directory is writing to it. A log
// that cannot be renamed (a directory turned read-only) is appended to, as
// before, with a warning: the start is not failed for it.
func openServerLog(path string, log *slog.Logger) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxServerLogBytes {
		if err := os.Rename(path, path+".1"); err != nil {
			log.Warn("cannot rotate the PostgreSQL server log; appending to it", "log", path, "size", fi.Size(), "err", err)
		} else {
			log.Info("rotated the PostgreSQL server log", "log", path, "previous", path+".1", "size", fi.Size())
		}
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}
