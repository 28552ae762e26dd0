package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// watchBundle is a store test bundle with a listener that delivers every
// notification (paired with no store) and a second store playing the
// replica that runs the jobs.
type watchBundle struct {
	*bundle
	runner   *store.Store
	listener *store.Listener
}

func setupWatch(t *testing.T) watchBundle {
	t.Helper()
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l := store.NewListener(b.db.Pool, nil)
	go l.Run(ctx)
	<-l.Ready()
	return watchBundle{bundle: b, runner: store.New(b.db.Pool, store.Options{}), listener: l}
}

// create makes a running job with its first attempt through the runner's store.
func (b watchBundle) create(t *testing.T, key string) *store.Job {
	t.Helper()
	nj := newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	j, _, err := b.runner.CreateJob(context.Background(), nj)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func (b watchBundle) complete(j *store.Job) error {
	a := j.Attempts[0]
	won, err := b.runner.Complete(context.Background(), store.Completion{JobID: j.ID, AttemptID: a.ID,
		ReadVersion: a.ReadVersion, Result: json.RawMessage(`{}`)})
	if err == nil && !won {
		err = fmt.Errorf("job %s: the only attempt did not win", j.ID)
	}
	return err
}

func (b watchBundle) win(t *testing.T, j *store.Job) {
	t.Helper()
	if err := b.complete(j); err != nil {
		t.Fatal(err)
	}
}

// Issue 11: a batched win notifies only a job that a waiter watches — a
// notifying transaction holds a database-wide lock through its commit.
func TestWinNotifiesOnlyWatchedJobs(t *testing.T) {
	b := setupWatch(t)
	ctx := context.Background()
	quiet, watched := b.create(t, "quiet"), b.create(t, "watched")
	quietCh, unsubQuiet := b.listener.Subscribe(quiet.ID)
	defer unsubQuiet()
	watchedCh, unsubWatched := b.listener.Subscribe(watched.ID)
	defer unsubWatched()
	if state, err := b.st.WatchJob(ctx, "acme", watched.ID); err != nil || state != store.JobRunning {
		t.Fatalf("WatchJob = %q, %v; want running", state, err)
	}
	var flag bool
	if err := b.db.Pool.QueryRow(ctx, `SELECT watched FROM jobs WHERE id = $1`, watched.ID).Scan(&flag); err != nil || !flag {
		t.Fatalf("watched = %v, %v", flag, err)
	}

	// The quiet win first: notifications arrive in commit order, so once the
	// watched job's is delivered the quiet one's would have been.
	b.win(t, quiet)
	b.win(t, watched)
	if got := <-watchedCh; got != store.JobSucceeded {
		t.Fatalf("the watched job's win was announced as %q", got)
	}
	select {
	case got := <-quietCh:
		t.Fatalf("a win nobody watched was notified (%q)", got)
	default:
	}

	// Watching a settled job writes nothing and reads its state.
	if state, err := b.st.WatchJob(ctx, "acme", quiet.ID); err != nil || state != store.JobSucceeded {
		t.Fatalf("WatchJob of a won job = %q, %v", state, err)
	}
	if err := b.db.Pool.QueryRow(ctx, `SELECT watched FROM jobs WHERE id = $1`, quiet.ID).Scan(&flag); err != nil || flag {
		t.Fatalf("a settled job was flagged: %v, %v", flag, err)
	}
	// Another owner's job is not found, and not flagged.
	if _, err := b.st.WatchJob(ctx, "globex", watched.ID); err != store.ErrNotFound {
		t.Fatalf("another owner's job: %v, want ErrNotFound", err)
	}
}

// Issue 11: a waiter that watches a job while its win commits either reads it
// won or is told of the win — never neither (the flag and the win lock the
// same row). Many rounds, each starting both at once.
func TestWatchJobRacingTheWinIsNeverLeftWaiting(t *testing.T) {
	b := setupWatch(t)
	ctx := context.Background()
	var sawWon, toldOfWin int
	for i := range 40 {
		j := b.create(t, fmt.Sprintf("race-%d", i))
		changed, unsubscribe := b.listener.Subscribe(j.ID)
		start := make(chan struct{})
		var state string
		var err, winErr error
		var wg sync.WaitGroup
		wg.Go(func() { <-start; state, err = b.st.WatchJob(ctx, "acme", j.ID) })
		wg.Go(func() { <-start; winErr = b.complete(j) })
		close(start)
		wg.Wait()
		if err != nil || winErr != nil {
			t.Fatalf("round %d: watch: %v; win: %v", i, err, winErr)
		}
		switch state {
		case store.JobSucceeded:
			sawWon++
		case store.JobRunning:
			select {
			case got := <-changed:
				if got != store.JobSucceeded {
					t.Fatalf("round %d: announced %q", i, got)
				}
				toldOfWin++
			case <-time.After(30 * time.Second):
				t.Fatalf("round %d: the watcher read the job running and was never told of its win", i)
			}
		default:
			t.Fatalf("round %d: WatchJob = %q", i, state)
		}
		unsubscribe()
	}
	t.Logf("%d rounds read the job won, %d were told of the win", sawWon, toldOfWin)
}
