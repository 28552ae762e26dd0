package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// A log level the router cannot parse is refused at startup with the message
// config.Load gives, not silently turned into info.
func TestUnknownLogLevelIsRefused(t *testing.T) {
	const want = `log.level: "verbose" is not debug, info, warn or error`
	if _, err := Logger(config.Log{Level: "verbose"}); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Logger with level verbose: %v, want %q", err, want)
	}
	if _, err := Logger(config.Log{Format: "xml"}); err == nil || !strings.Contains(err.Error(), `log.format: "xml" is not json or text`) {
		t.Fatalf("Logger with format xml: %v", err)
	}
	cfg := &config.Config{Log: config.Log{Level: "verbose"}, DatabaseURL: "postgres://nobody@127.0.0.1:1/never"}
	if _, err := New(context.Background(), cfg, Options{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("server.New with log level verbose: %v, want %q", err, want)
	}
	if _, err := config.Parse([]byte("log: {level: verbose}\n")); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("config.Parse says otherwise: %v", err)
	}

	// Empty settings are the defaults; valid ones apply.
	log, err := newLogger(&bytes.Buffer{}, config.Log{})
	if err != nil || !log.Enabled(context.Background(), slog.LevelInfo) || log.Enabled(context.Background(), slog.LevelDebug) {
		t.Fatalf("default logger: %v", err)
	}
	var buf bytes.Buffer
	if log, err = newLogger(&buf, config.Log{Level: "debug", Format: "json"}); err != nil || !log.Enabled(context.Background(), slog.LevelDebug) {
		t.Fatalf("debug json logger: %v", err)
	}
	log.Debug("hello")
	if !strings.HasPrefix(buf.String(), "{") {
		t.Fatalf("json logger wrote %q", buf.String())
	}

	// NewLogger, for callers without an error to return, says what it fell
	// back from, and keeps the settings that parsed.
	buf.Reset()
	log = loggerOrDefault(&buf, config.Log{Level: "verbose", Format: "json"})
	if !strings.HasPrefix(buf.String(), "{") || !strings.Contains(buf.String(), "verbose") || !log.Enabled(context.Background(), slog.LevelInfo) {
		t.Fatalf("fallback logger wrote %q", buf.String())
	}
}
