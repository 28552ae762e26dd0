package server

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/config"
)

// lockedBuffer is a bytes.Buffer a logger may write to from any goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// With `database_url: embedded` the router says it uses the embedded
// PostgreSQL, not that it starts one: a CLI command beside `make run` uses
// the server running there ("starting …" then "already running …: using
// it" read as a second server). The process that started the server says
// when it has stopped it, with its directory; one that used another's says
// nothing of the kind (that server goes on). Found by a newcomer walkthrough.
func TestEmbeddedDatabaseSaysWhatItUsesAndWhenItStopsIt(t *testing.T) {
	base, err := os.MkdirTemp("", "router-embedded-log-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	// Reachable by the server's user when the tests run as root (else the
	// data directory moves out of the project).
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(base, ".local"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(base)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := &config.Config{DatabaseURL: config.EmbeddedDatabase}
	open := func(w *lockedBuffer) func() {
		t.Helper()
		_, closeDB, err := OpenDatabase(ctx, cfg, slog.New(slog.NewTextHandler(w, nil)))
		if err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		closeOnce := func() { once.Do(closeDB) }
		t.Cleanup(closeOnce)
		return closeOnce
	}
	var starter, user lockedBuffer
	closeStarter := open(&starter) // make run
	closeUser := open(&user)       // a CLI command beside it
	closeUser()
	closeStarter()

	dataDir := filepath.Join(base, ".local", "pg")
	for name, log := range map[string]string{"the starter": starter.String(), "the second": user.String()} {
		if !strings.Contains(log, `msg="database_url: embedded: using the embedded local PostgreSQL"`) || strings.Contains(log, "starting the embedded") {
			t.Errorf("%s's log:\n%s\nwant it to say it uses the embedded local PostgreSQL, not that it starts one", name, log)
		}
	}
	if log := user.String(); !strings.Contains(log, "already running") || strings.Contains(log, "PostgreSQL stopped") {
		t.Errorf("log of the process that used the running server:\n%s\nwant it to say it used it and not that it stopped it", log)
	}
	lines := strings.Split(strings.TrimSpace(starter.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `msg="PostgreSQL stopped"`) || !strings.Contains(last, "dir="+dataDir) {
		t.Errorf("log of the process that started the server:\n%s\nwant it to end on PostgreSQL stopped with dir=%s", starter.String(), dataDir)
	}
}
