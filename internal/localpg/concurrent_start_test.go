package localpg_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/localpg"
)

// Two starts of one data directory at once (two CLI commands, `make run` and
// a command) end with one server that both use: they used to initdb into the
// same directory beside it, removing each other's, or, on an existing
// cluster, start a server each, the second failing on the first's lock file
// and advising to delete the running cluster's data. Found by review.
func TestConcurrentStartsOfOneDataDirectoryShareOneServer(t *testing.T) {
	t.Parallel()
	for _, existing := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		parent := tempDir(t)
		dir := filepath.Join(parent, "data")
		if existing {
			c, err := localpg.Start(ctx, localpg.Options{DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			c.Stop()
		}
		var wg sync.WaitGroup
		var cs [2]*localpg.Cluster
		var errs [2]error
		for i := range cs {
			wg.Go(func() { cs[i], errs[i] = localpg.Start(ctx, localpg.Options{DataDir: dir}) })
		}
		wg.Wait()
		for i, c := range cs {
			if errs[i] == nil {
				t.Cleanup(c.Stop)
			}
		}
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("existing cluster %v: two starts at once: %v; %v", existing, errs[0], errs[1])
		}
		if cs[0].URL != cs[1].URL {
			t.Fatalf("existing cluster %v: two starts at once returned %s and %s; want one server", existing, cs[0].URL, cs[1].URL)
		}
		conn, err := pgx.Connect(ctx, cs[0].URL)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
		if m, _ := filepath.Glob(filepath.Join(parent, "*")); len(m) != 2 { // data and data.log
			t.Errorf("existing cluster %v: beside the data directory: %v; want data and data.log only", existing, m)
		}
	}
}

// A fresh start (router localdb) deletes its data directory first: it
// refuses, deleting nothing, one whose server runs or that another start is
// setting up.
func TestFreshStartRefusesADirectoryInUse(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	running, _ := clusterWithTable(ctx, t)
	if c, err := localpg.Start(ctx, localpg.Options{DataDir: running.DataDir, Fresh: true}); !errors.Is(err, localpg.ErrInUse) {
		if err == nil {
			c.Stop()
		}
		t.Errorf("a fresh start on a running server's directory: %v; want ErrInUse", err)
	}
	conn, err := pgx.Connect(ctx, running.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var kept bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass('only_here') IS NOT NULL").Scan(&kept); err != nil || !kept {
		t.Errorf("the running server's table after a refused fresh start: %v, %v", kept, err)
	}

	starting := filepath.Join(tempDir(t), "data")
	if err := os.MkdirAll(starting, 0o700); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(starting, "PG_VERSION")
	if err := os.WriteFile(notes, []byte("15\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unlock, err := localpg.LockDataDir(starting) // another start under way
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if c, err := localpg.Start(ctx, localpg.Options{DataDir: starting, Fresh: true}); !errors.Is(err, localpg.ErrInUse) {
		if err == nil {
			c.Stop()
		}
		t.Errorf("a fresh start on a directory another start holds: %v; want ErrInUse", err)
	}
	if _, err := os.Stat(notes); err != nil {
		t.Errorf("the directory another start holds was changed: %v", err)
	}
}
