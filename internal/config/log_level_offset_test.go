package config

import (
	"log/slog"
	"strings"
	"testing"
)

// docs/configuration.md: "`log.level` is one of the four levels" (debug, info,
// warn, error). slog's parser also takes offsets: `error+4` (level 12) was
// accepted and silenced every line the router logs, errors included, without
// a word. Found by review (rcli10).
func TestLogLevelOffsetsRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, lvl := range []string{"error+4", "WARN+8", "debug-4"} {
		c, err := Parse([]byte(defaultsBase + "log: {level: " + lvl + "}\n"))
		if err == nil {
			l, _ := c.Log.SlogLevel()
			t.Errorf("log.level %q accepted (slog level %d); docs say it is one of debug, info, warn, error", lvl, l)
			continue
		}
		if want := `log.level: "` + lvl + `" is not debug, info, warn or error`; !strings.Contains(err.Error(), want) {
			t.Errorf("log.level %q: Parse = %v; want %q", lvl, err, want)
		}
	}
}

// The four levels are still taken in any case, as slog took them.
func TestLogLevelFourWordsAnyCase(t *testing.T) {
	for lvl, want := range map[string]slog.Level{"": slog.LevelInfo, "debug": slog.LevelDebug, "INFO": slog.LevelInfo, "Warn": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := (Log{Level: lvl}).SlogLevel(); err != nil || got != want {
			t.Errorf("SlogLevel(%q) = %v, %v; want %v", lvl, got, err, want)
		}
	}
	for _, lvl := range []string{"warning", " info", "err"} {
		if _, err := (Log{Level: lvl}).SlogLevel(); err == nil {
			t.Errorf("SlogLevel(%q) accepted", lvl)
		}
	}
}
