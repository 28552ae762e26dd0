package store_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Issue 11: concurrent wins of different jobs share statements, and each
// attempt learns its own outcome.
func TestConcurrentWinsShareBatches(t *testing.T) {
	db := testdb.New(t, store.Options{})
	obs := &winObserver{}
	st := store.New(db.Pool, store.Options{Observer: obs})
	ctx := context.Background()
	const n = 48
	type pair struct{ job, attempt string }
	pairs := make([]pair, n)
	for i := range n {
		nj := newJob(t, "acme", "triage", "w"+itoa(i), `{"i":`+itoa(i)+`}`)
		nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
		j, _, err := st.CreateJob(ctx, nj)
		if err != nil {
			t.Fatal(err)
		}
		pairs[i] = pair{j.ID, j.Attempts[0].ID}
	}
	start := make(chan struct{})
	won := make(chan bool, n)
	for _, p := range pairs {
		go func() {
			<-start
			w, err := st.Complete(ctx, store.Completion{JobID: p.job, AttemptID: p.attempt, ReadVersion: 1,
				Result: json.RawMessage(`{"ok":true}`), LatencyMS: 3})
			if err != nil {
				t.Error(err)
			}
			won <- w
		}()
	}
	close(start)
	for range n {
		if !<-won {
			t.Fatal("an uncontested attempt lost")
		}
	}
	var succeeded, leased int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'succeeded'), count(*) FILTER (WHERE lease_owner IS NOT NULL)
		FROM jobs`).Scan(&succeeded, &leased); err != nil {
		t.Fatal(err)
	}
	if succeeded != n || leased != 0 {
		t.Fatalf("succeeded=%d leased=%d, want %d and 0 (the win releases the job's lease)", succeeded, leased, n)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.items != n || obs.batches > n {
		t.Fatalf("observer saw %d wins in %d batches", obs.items, obs.batches)
	}
	t.Logf("%d wins in %d batches", obs.items, obs.batches)
}

// Issue 13: the compare-and-swap requires the winning attempt to be in flight:
// a valid answer from an attempt the router already cancelled cannot complete
// the job.
func TestWinRequiresLiveAttempt(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", "dead", `{}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	j, _, err := b.st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}
	a := j.Attempts[0]
	if err := b.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptCancelled}); err != nil {
		t.Fatal(err)
	}
	won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: json.RawMessage(`{}`)})
	if err != nil || won {
		t.Fatalf("won=%v err=%v: a cancelled attempt must not win", won, err)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE state = 'succeeded'`); n != 0 {
		t.Fatalf("job completed by a cancelled attempt")
	}
}

// Issue 11: one statement renews the leases of every job a replica runs and
// of their in-flight attempts — and nothing another replica holds.
func TestRenewLeasesForManyJobs(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	var mine []string
	for i := range 3 {
		owner := "r1"
		if i == 2 {
			owner = "r2"
		}
		nj := newJob(t, "acme", "triage", "l"+itoa(i), `{}`)
		nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, owner, time.Second
		j, _, err := b.st.CreateJob(ctx, nj)
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, j.ID) // r2's job is asked for too: it must be left alone
	}
	if _, err := b.st.RenewLeases(ctx, "r1", mine, nil, time.Hour); err != nil {
		t.Fatal(err)
	}
	long := `lease_expires_at > now() + interval '30 minutes'`
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE `+long); n != 2 {
		t.Errorf("renewed jobs = %d, want r1's 2", n)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE `+long); n != 2 {
		t.Errorf("renewed attempts = %d, want r1's 2", n)
	}
}

type winObserver struct {
	mu             sync.Mutex
	items, batches int
}

func (o *winObserver) DurableCommit() {}
func (o *winObserver) Batch(kind string, size int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if kind == "win" {
		o.items += size
		o.batches++
	}
}

// A win sent again after it committed (a batch re-sent one by one after an
// error that hid its commit) is still a win, with no "lost" record.
func TestWinSentAgainAfterCommitIsAWin(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", "again", `{"i":1}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	j, _, err := b.st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}
	c := store.Completion{JobID: j.ID, AttemptID: j.Attempts[0].ID, ReadVersion: 1, Result: json.RawMessage(`{"ok":true}`)}
	for i := range 2 {
		if won, err := b.st.Complete(ctx, c); !won || err != nil {
			t.Fatalf("complete #%d: won=%v err=%v", i+1, won, err)
		}
	}
	if n := count(t, b, `SELECT count(*) FROM race_events WHERE attempt_id = $1`, c.AttemptID); n != 0 {
		t.Fatalf("race events on the winner = %d, want none", n)
	}
}
