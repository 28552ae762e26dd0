package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// notifyingBuffer is a log's output that says when something was written.
type notifyingBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{}
}

func (b *notifyingBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer func() {
		select {
		case b.written <- struct{}{}:
		default:
		}
	}()
	return b.buf.Write(p)
}

func (b *notifyingBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A second signal that comes after the drain is over (while Close waits on
// webhook deliveries or the database) cuts no attempt: there is none left.
// serve used to say it cut the attempts still in flight and handed their
// jobs over whenever it came; it says what the signal still does. (While
// attempts are in flight it says they are cut:
// TestServeStopsAtOnceOnASecondSignal.) Found by review.
func TestSecondSignalAfterTheDrainSaysNoAttemptIsCut(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := serveConfig(t, db, "stop-now-wording", "stop-now-wording-key", `log: {level: error}
providers:
  - {name: scripted, type: scripted, script: [{output: '{}'}]}
routes:
  default: {providers: [scripted]}
`)
	srv, err := server.New(context.Background(), cfg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// The first signal came before serving: ServeListeners drains (nothing)
	// and returns.
	first, signalFirst := context.WithCancel(context.Background())
	signalFirst()
	if err := srv.ServeListeners(first, listen(t), listen(t)); err != nil {
		t.Fatal(err)
	}

	out := &notifyingBuffer{written: make(chan struct{}, 1)}
	second, signalSecond := context.WithCancel(context.Background())
	signalSecond()
	release := stopNowOn(second, srv, slog.New(slog.NewTextHandler(out, nil)))
	select {
	case <-out.written:
	case <-time.After(time.Minute): // only to fail rather than hang
		t.Fatal("nothing said a minute after the second signal")
	}
	release()

	got := out.String()
	if strings.Contains(got, "attempts still in flight are cut") {
		t.Errorf("after the drain, the second signal was said to cut attempts in flight:\n%s", got)
	}
	if !strings.Contains(got, "no attempt is in flight here") {
		t.Errorf("the second signal after the drain was not said to find no attempt in flight:\n%s", got)
	}
}
