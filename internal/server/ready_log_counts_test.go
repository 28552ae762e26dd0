package server_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// "router ready … providers=3" was logged for a configuration of two
// providers: it counted the targets (a provider serving two models is two).
// It now counts each: providers=2 targets=3. Found in a newcomer's
// walkthrough.
func TestReadyLogCountsProvidersAndTargets(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse([]byte(`providers:
  - {name: a, type: scripted, model: m1}
  - {name: b, type: scripted, model: m2}
routes:
  default:
    targets:
      - {provider: a}
      - {provider: a, model: m3}
      - {provider: b}
conformance: {gate: off}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = db.URL
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	read := make(chan struct{})
	go func() { defer close(read); _, _ = io.Copy(&logged, r) }()
	stderr := os.Stderr
	os.Stderr = w // the router's logger writes where os.Stderr is when New builds it
	srv, err := server.New(context.Background(), cfg, server.Options{})
	os.Stderr = stderr
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	w.Close()
	<-read
	var ready string
	for _, line := range strings.Split(logged.String(), "\n") {
		if strings.Contains(line, `msg="router ready"`) {
			ready = line
		}
	}
	if !strings.Contains(ready, " providers=2 ") || !strings.Contains(ready, " targets=3 ") {
		t.Errorf("the ready line %q, want providers=2 and targets=3; the log:\n%s", ready, logged.String())
	}
}
