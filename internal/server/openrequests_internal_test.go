package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The shutdown's wait for the tenant handlers it cut (awaitCut) ends as the
// last one returns, and a second signal (Options.StopNow) ends it at once,
// saying how many are left: it never outlasts what the operator asked for.
func TestAwaitCutEndsWithTheHandlersOrASecondSignal(t *testing.T) {
	open := &openRequests{}
	started, release := make(chan struct{}), make(chan struct{})
	h := open.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		started <- struct{}{}
		<-release // a cut handler still handing its job over
	}))
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}()
	<-started

	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	now, secondSignal := context.WithCancel(context.Background())
	secondSignal()
	awaitCut(open, now, log)
	if !strings.Contains(buf.String(), "second signal") || !strings.Contains(buf.String(), "requests=1") {
		t.Errorf("after a second signal the wait for a cut handler still running logged %q; want it to say it stops waiting, for 1 request", buf.String())
	}

	done := make(chan struct{})
	go func() { defer close(done); awaitCut(open, context.Background(), log) }()
	close(release)
	<-returned
	<-done // ends as the handler returns, not at cutRequestsWait
	if strings.Contains(buf.String(), "still running after waiting") {
		t.Errorf("the wait for a handler that returned ran out instead: %s", buf.String())
	}
	if n := open.count(); n != 0 {
		t.Errorf("%d handlers counted as running after the last returned", n)
	}
	buf.Reset()
	awaitCut(open, now, log) // none running: returns at once, says nothing
	if buf.Len() != 0 {
		t.Errorf("with no handler running the wait logged %q", buf.String())
	}
}
