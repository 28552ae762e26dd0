package maintenance_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A follower replica logged "leader lease: stepped down" on every shutdown:
// StepDown owed a resignation whether or not the replica led, and the
// resignation logged as it ended, though it deleted nothing. Now only a
// replica that led says it stepped down; the follower's resignation leaves
// the leader's lease alone. Found in a newcomer's walkthrough.
func TestFollowerStepDownDoesNotSayItSteppedDown(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	var aLog, bLog bytes.Buffer
	a := maintenance.NewElector(db.Store, "maintenance", "replica-a", time.Minute, slog.New(slog.NewTextHandler(&aLog, nil)))
	b := maintenance.NewElector(db.Store, "maintenance", "replica-b", time.Minute, slog.New(slog.NewTextHandler(&bLog, nil)))
	if !a.Once(ctx) {
		t.Fatal("the first replica did not become leader")
	}
	if b.Once(ctx) {
		t.Fatal("the second replica took the lease the first holds")
	}
	if err := b.StepDown(ctx); err != nil {
		t.Fatalf("the follower's StepDown: %v", err)
	}
	if strings.Contains(bLog.String(), "stepped down") {
		t.Errorf("the follower, which never led, logged:\n%s", bLog.String())
	}
	if !a.Once(ctx) || !a.IsLeader() {
		t.Fatal("the follower's step-down took the lease from the leader")
	}
	if err := a.StepDown(ctx); err != nil {
		t.Fatalf("the leader's StepDown: %v", err)
	}
	if !strings.Contains(aLog.String(), "leader lease: stepped down") {
		t.Errorf("the leader stepped down without saying so; it logged:\n%s", aLog.String())
	}
	if !b.IsLeader() && b.Once(ctx) {
		t.Error("the follower, stepped down, took the lease again")
	}
}
