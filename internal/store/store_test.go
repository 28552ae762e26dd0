package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

type bundle struct {
	db *testdb.DB
	st *store.Store
}

func setup(t *testing.T) *bundle {
	t.Helper()
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	return &bundle{db: db, st: db.Store}
}

func newJob(t testing.TB, owner, op, key, input string) store.NewJob {
	t.Helper()
	fp, err := store.Fingerprint(op, "", "", json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	return store.NewJob{Owner: owner, Operation: op, IdempotencyKey: key, Fingerprint: fp,
		PromptVersion: "1", Route: "default", Input: json.RawMessage(input)}
}

func count(t *testing.T, b *bundle, q string, args ...any) int {
	t.Helper()
	var n int
	if err := b.db.Pool.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCreateJobClaimsKeyOnce(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j1, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "k1", `{"a":1,"b":[1,2]}`))
	if err != nil || !created {
		t.Fatalf("first create: created=%v err=%v", created, err)
	}
	// Same JSON, other key order and whitespace: the same intent.
	j2, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "k1", "{ \"b\": [1, 2],\n \"a\": 1 }"))
	if err != nil || created || j2.ID != j1.ID {
		t.Fatalf("replay: created=%v err=%v id=%v want %v", created, err, j2, j1.ID)
	}
	// Different input: conflict, nothing written.
	_, _, err = b.st.CreateJob(ctx, newJob(t, "acme", "triage", "k1", `{"a":2}`))
	if !errors.Is(err, store.ErrKeyReused) {
		t.Fatalf("reuse: err=%v, want ErrKeyReused", err)
	}
	if n := count(t, b, "SELECT count(*) FROM jobs"); n != 1 {
		t.Fatalf("jobs = %d, want 1", n)
	}
	// Other owner or other operation: independent.
	j3, created, err := b.st.CreateJob(ctx, newJob(t, "globex", "triage", "k1", `{"a":1,"b":[1,2]}`))
	if err != nil || !created || j3.ID == j1.ID {
		t.Fatalf("other owner: created=%v err=%v", created, err)
	}
	j4, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "invoice", "k1", `{"a":1,"b":[1,2]}`))
	if err != nil || !created || j4.ID == j1.ID {
		t.Fatalf("other operation: created=%v err=%v", created, err)
	}
	if _, err := b.st.GetJob(ctx, "globex", j1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other owner's read: err=%v, want ErrNotFound", err)
	}
}

func TestCreateJobConcurrentSameKey(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	const n = 30
	ids := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "same", `{"x":1}`))
			if err != nil {
				errs <- err
				return
			}
			ids[i] = j.ID
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("two job ids for one key: %s and %s", ids[0], id)
		}
	}
	if c := count(t, b, "SELECT count(*) FROM jobs"); c != 1 {
		t.Fatalf("jobs = %d, want 1", c)
	}
}

func startAttempt(t *testing.T, b *bundle, jobID, provider, role string) *store.Attempt {
	t.Helper()
	a, err := b.st.CreateAttempt(context.Background(), store.NewAttempt{JobID: jobID, Provider: provider, Role: role, LeaseOwner: "test"})
	if err != nil {
		t.Fatalf("create attempt: %v", err)
	}
	if err := b.st.MarkAttemptRunning(context.Background(), a.ID); err != nil {
		t.Fatal(err)
	}
	return a
}

// Acceptance (issue 2, 7): two completions racing the compare-and-swap.
func TestCompleteCompareAndSwapRace(t *testing.T) {
	for round := range 20 {
		b := setup(t)
		ctx := context.Background()
		j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "race", `{"round":1}`))
		if err != nil {
			t.Fatal(err)
		}
		a1 := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
		a2 := startAttempt(t, b, j.ID, "p2", store.RoleHedge)
		if a1.ReadVersion != a2.ReadVersion {
			t.Fatalf("hedge read version %d, primary %d: a hedge must not bump the version", a2.ReadVersion, a1.ReadVersion)
		}
		before := a1.ReadVersion
		release := make(chan struct{})
		won := make([]bool, 2)
		var wg sync.WaitGroup
		for i, a := range []*store.Attempt{a1, a2} {
			wg.Go(func() {
				<-release
				w, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion,
					Result: json.RawMessage(`{"from":"` + a.Provider + `"}`), LatencyMS: 5})
				if err != nil {
					t.Error(err)
				}
				won[i] = w
			})
		}
		close(release)
		wg.Wait()
		if won[0] == won[1] {
			t.Fatalf("round %d: won = %v, want exactly one winner", round, won)
		}
		got, err := b.st.GetJob(ctx, "acme", j.ID)
		if err != nil {
			t.Fatal(err)
		}
		winner, loser := a1, a2
		if won[1] {
			winner, loser = a2, a1
		}
		if got.State != store.JobSucceeded || got.Version != before+1 || *got.CompletedBy != winner.ID {
			t.Fatalf("job state=%s version=%d (want %d) completed_by=%v", got.State, got.Version, before+1, *got.CompletedBy)
		}
		if string(got.Result) != `{"from": "`+winner.Provider+`"}` {
			t.Fatalf("result %s is not the winner's", got.Result)
		}
		states := map[string]string{}
		for _, a := range got.Attempts {
			states[a.ID] = a.State
		}
		if states[winner.ID] != store.AttemptWon || states[loser.ID] != store.AttemptLost {
			t.Fatalf("attempt states %v", states)
		}
		if len(got.RaceEvents) != 1 || *got.RaceEvents[0].AttemptID != loser.ID || got.RaceEvents[0].Kind != "lost" {
			t.Fatalf("race events %+v, want one 'lost' event for the loser", got.RaceEvents)
		}
		if got.KeyExpiresAt == nil {
			t.Fatal("a succeeded job's key must get an expiry")
		}
	}
}

func TestBlockingRule(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, _ := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "block", `{}`))
	a1, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p1", Role: store.RolePrimary})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p2", Role: store.RoleHedge}); !errors.Is(err, store.ErrAttemptBlocked) {
		t.Fatalf("hedge while primary starting: err=%v, want ErrAttemptBlocked", err)
	}
	if err := b.st.MarkAttemptRunning(ctx, a1.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.st.FinishAttempt(ctx, a1.ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p2", Role: store.RoleFailover}); !errors.Is(err, store.ErrAttemptBlocked) {
		t.Fatalf("attempt while sibling unknown: err=%v, want ErrAttemptBlocked", err)
	}
	state, err := b.st.SettleJob(ctx, j.ID, "")
	if err != nil || state != store.JobUnknown {
		t.Fatalf("settle: %s %v, want unknown", state, err)
	}
	if c := count(t, b, "SELECT count(*) FROM attempts"); c != 1 {
		t.Fatalf("attempts = %d, want 1", c)
	}
}

func TestKeyRetention(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "ret", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	// Not terminal: its key has no expiry at all (an expiry, however far,
	// would end while the job runs), as stored and as the job reports it.
	noExpiry := func(what, jobID string) {
		t.Helper()
		if n := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE job_id = $1 AND expires_at IS NULL`, jobID); n != 1 {
			t.Fatalf("%s: its key has an expiry (or no key row); want none while the job is not terminal", what)
		}
		got, err := b.st.GetJob(ctx, "acme", jobID)
		if err != nil || got.KeyExpiresAt != nil {
			t.Fatalf("%s: key_expires_at %v (err %v); want none", what, got.KeyExpiresAt, err)
		}
	}
	noExpiry("a new job", j.ID)
	again, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "ret", `{}`))
	if err != nil || created || again.ID != j.ID {
		t.Fatalf("running job's key must not expire: created=%v err=%v", created, err)
	}
	noExpiry("a replayed job", j.ID)
	if err := b.st.CancelJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	// Terminal: the key expires a retention from now (an hour: setup).
	if n := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE job_id = $1
		AND expires_at > now() AND expires_at <= now() + interval '1 hour'`, j.ID); n != 1 {
		t.Fatal("a cancelled job's key does not expire within its retention")
	}
	// Terminal, inside retention: replay.
	again, created, _ = b.st.CreateJob(ctx, newJob(t, "acme", "triage", "ret", `{}`))
	if created || again.ID != j.ID {
		t.Fatal("key inside retention must replay")
	}
	// Past retention (moved on the database clock): a new job.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	fresh, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "ret", `{"different":true}`))
	if err != nil || !created || fresh.ID == j.ID {
		t.Fatalf("expired key: created=%v err=%v", created, err)
	}
	noExpiry("a job that took an expired key over", fresh.ID)
	old, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil || old.State != store.JobCancelled {
		t.Fatalf("old job must stay readable: %v %v", old, err)
	}
}

// A valid result that arrives after its attempt's lease expired (the job went
// unknown, so the version moved) still wins when nobody completed the job.
func TestLateResultAfterLeaseExpiryWins(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, _ := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "late", `{}`))
	a := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.st.GetJob(ctx, "acme", j.ID); got.State != store.JobUnknown {
		t.Fatalf("state %s, want unknown", got.State)
	}
	won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: json.RawMessage(`{"ok":1}`)})
	if err != nil || !won {
		t.Fatalf("late valid result: won=%v err=%v", won, err)
	}
	got, _ := b.st.GetJob(ctx, "acme", j.ID)
	if got.State != store.JobSucceeded || *got.CompletedBy != a.ID || got.Attempts[0].State != store.AttemptWon {
		t.Fatalf("job %s attempt %s", got.State, got.Attempts[0].State)
	}
}

// An attempt that wins while a sibling is unknown (its lease expired with no
// answer) settles the sibling as lost, with a race event, in the win's
// transaction. The job's version did not move, so this is the batched win
// statement's path (its u and e CTEs); without them the primary stays unknown.
func TestWinSettlesUnknownSiblingAsLost(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, _ := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "sibling", `{}`))
	primary := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	hedge := startAttempt(t, b, j.ID, "p2", store.RoleHedge)
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, primary.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	cur, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cur.State != store.JobRunning || cur.Attempts[0].State != store.AttemptUnknown {
		t.Fatalf("before the win: job %s, primary %s; want running and unknown", cur.State, cur.Attempts[0].State)
	}
	won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: hedge.ID, ReadVersion: cur.Version, Result: json.RawMessage(`{"ok":1}`)})
	if err != nil || !won {
		t.Fatalf("hedge's valid answer: won=%v err=%v", won, err)
	}
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, a := range got.Attempts {
		states[a.ID] = a.State
	}
	if got.State != store.JobSucceeded || states[hedge.ID] != store.AttemptWon || states[primary.ID] != store.AttemptLost {
		t.Fatalf("after the win: job %s, hedge %s, primary %s; want succeeded, won, lost", got.State, states[hedge.ID], states[primary.ID])
	}
	if n := count(t, b, `SELECT count(*) FROM race_events WHERE attempt_id = $1 AND kind = 'lost'`, primary.ID); n != 1 {
		t.Fatalf("%d race events for the settled primary, want 1", n)
	}
}
