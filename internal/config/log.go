package config

import (
	"fmt"
	"log/slog"
	"strings"
)

// SlogLevel is log.level as a slog.Level: debug, info, warn or error, in any
// case; empty is the default, info. slog's own parser also takes offsets
// (error+4, debug-4), which the documentation does not offer and which above
// error silence every line, errors included: they are refused. Load refuses
// a level it cannot take with this same error; the server refuses one in a
// Config built in code with it too.
func (l Log) SlogLevel() (slog.Level, error) {
	switch strings.ToLower(l.Level) {
	case "":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("log.level: %q is not debug, info, warn or error (omit it for the default, info; slog's offsets such as warn+2 are not taken)", l.Level)
}

// JSON says whether log.format asks for JSON lines; empty is the default,
// text. Any other value than json or text is an error, as Load says.
func (l Log) JSON() (bool, error) {
	switch l.Format {
	case "json":
		return true, nil
	case "text", "":
		return false, nil
	}
	return false, fmt.Errorf("log.format: %q is not json or text (omit it for the default, text)", l.Format)
}
