package server

import (
	"io"
	"log/slog"
	"os"

	"github.com/routerhq/router/internal/config"
)

// Logger is the router's slog logger (on stderr) for the log settings, or
// the error config.Load gives for a log.level or log.format it refuses (a
// Config built in code can hold one). Empty settings are the defaults: info,
// text.
func Logger(c config.Log) (*slog.Logger, error) { return newLogger(os.Stderr, c) }

// NewLogger is Logger for callers with no error to return: a setting it
// cannot use falls back to its default (info, text), and the logger's first
// line says so — never silently.
func NewLogger(c config.Log) *slog.Logger { return loggerOrDefault(os.Stderr, c) }

func newLogger(w io.Writer, c config.Log) (*slog.Logger, error) {
	level, err := c.SlogLevel()
	if err != nil {
		return nil, err
	}
	asJSON, err := c.JSON()
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: level}
	if asJSON {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

func loggerOrDefault(w io.Writer, c config.Log) *slog.Logger {
	log, err := newLogger(w, c)
	if err == nil {
		return log
	}
	fallback := config.Log{Level: c.Level, Format: c.Format}
	if _, lerr := fallback.SlogLevel(); lerr != nil {
		fallback.Level = ""
	}
	if _, ferr := fallback.JSON(); ferr != nil {
		fallback.Format = ""
	}
	log, _ = newLogger(w, fallback) // only defaults and settings that parsed
	log.Warn("logging with default settings in place of an invalid one: fix the log section of the configuration", "err", err)
	return log
}
