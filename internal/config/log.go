package config

import (
	"fmt"
	"log/slog"
)

// SlogLevel is log.level as a slog.Level: debug, info, warn or error (slog's
// names, with offsets such as warn+2); empty is the default, info. Load
// refuses a level it cannot parse with this same error; the server refuses
// one in a Config built in code with it too.
func (l Log) SlogLevel() (slog.Level, error) {
	if l.Level == "" {
		return slog.LevelInfo, nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.Level)); err != nil {
		return 0, fmt.Errorf("log.level: %q is not debug, info, warn or error (omit it for the default, info)", l.Level)
	}
	return level, nil
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
