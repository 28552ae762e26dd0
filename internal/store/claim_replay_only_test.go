package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// replayOnly is nj as the API claims it when the owner is at max_live_jobs
// and its key was held a moment ago: it may replay, never create.
func replayOnly(nj store.NewJob) store.NewJob {
	nj.ReplayOnly = true
	return nj
}

// expireKey ends the retention of the key of job id now, as if it had passed
// between the API's KeyHeld and its CreateJob.
func expireKey(t *testing.T, b *bundle, jobID string) {
	t.Helper()
	tag, err := b.db.Pool.Exec(context.Background(),
		`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE job_id = $1`, jobID)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("expire the key of %s: %v (%d rows)", jobID, err, tag.RowsAffected())
	}
}

// A replay-only claim whose key's retention ended after the key was looked
// up (held) and before the claim creates nothing — no job, no key taken over
// — and says so with ErrReplayKeyReleased; a key that holds a job, live or
// ended but unexpired, is answered with that job as before.
func TestReplayOnlyClaimCreatesNothingOnceTheKeyExpired(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", "replay-only", `{"n":1}`)
	old, created, err := b.st.CreateJob(ctx, nj)
	if err != nil || !created {
		t.Fatalf("first claim: created=%v err=%v", created, err)
	}

	// Live job: the replay finds it.
	got, created, err := b.st.CreateJob(ctx, replayOnly(nj))
	if err != nil || created || got == nil || got.ID != old.ID {
		t.Fatalf("replay-only claim of a live job's key: %v created=%v err=%v; want job %s", got, created, err, old.ID)
	}
	// Ended job, key unexpired: the replay finds it.
	if err := b.st.CancelJob(ctx, "acme", old.ID); err != nil {
		t.Fatal(err)
	}
	got, created, err = b.st.CreateJob(ctx, replayOnly(nj))
	if err != nil || created || got == nil || got.ID != old.ID {
		t.Fatalf("replay-only claim of an ended job's unexpired key: %v created=%v err=%v; want job %s", got, created, err, old.ID)
	}

	// Held when looked up, expired before the claim.
	held, err := b.st.KeyHeld(ctx, "acme", "triage", "replay-only")
	if err != nil || !held {
		t.Fatalf("KeyHeld: %v %v; want held", held, err)
	}
	expireKey(t, b, old.ID)
	got, created, err = b.st.CreateJob(ctx, replayOnly(nj))
	if !errors.Is(err, store.ErrReplayKeyReleased) || created || got != nil {
		t.Fatalf("replay-only claim of an expired key: %v created=%v err=%v; want nothing created and ErrReplayKeyReleased", got, created, err)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'replay-only'`); n != 1 {
		t.Fatalf("%d jobs hold or held the key; want 1 (the replay-only claim created one)", n)
	}
	if n := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'replay-only'
		AND job_id = $1 AND expires_at <= now()`, old.ID); n != 1 {
		t.Fatal("the expired key row was taken over or changed")
	}

	// A key that was never claimed: nothing to replay, nothing inserted.
	_, created, err = b.st.CreateJob(ctx, replayOnly(newJob(t, "acme", "triage", "never-claimed", `{"n":1}`)))
	if !errors.Is(err, store.ErrReplayKeyReleased) || created {
		t.Fatalf("replay-only claim of a free key: created=%v err=%v; want ErrReplayKeyReleased", created, err)
	}
	if n := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'never-claimed'`); n != 0 {
		t.Fatal("a replay-only claim inserted its key")
	}

	// The same request without the flag (an owner below its limit) takes
	// the expired key over, as ever.
	taker, created, err := b.st.CreateJob(ctx, nj)
	if err != nil || !created || taker.ID == old.ID {
		t.Fatalf("ordinary claim of the expired key: created=%v err=%v; want a new job", created, err)
	}
}

// In one batch, a replay-only claim and an ordinary claim of the same expired
// key: the ordinary one goes out for the key and creates the job, which the
// replay-only one is answered with (it never stands in for the key, which
// would leave the ordinary claim the expired job). Two replay-only claims of
// it create nothing.
func TestReplayOnlyClaimSharingABatch(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", "shared", `{"n":1}`)
	old, _, err := b.st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, "acme", old.ID); err != nil {
		t.Fatal(err)
	}
	expireKey(t, b, old.ID)

	jobs, created, errs := b.st.ClaimOneBatch(ctx, []store.NewJob{replayOnly(nj), replayOnly(nj)})
	for i := range jobs {
		if !errors.Is(errs[i], store.ErrReplayKeyReleased) || created[i] {
			t.Fatalf("replay-only claim %d of an expired key: created=%v err=%v; want ErrReplayKeyReleased", i, created[i], errs[i])
		}
	}

	jobs, created, errs = b.st.ClaimOneBatch(ctx, []store.NewJob{replayOnly(nj), nj})
	if errs[1] != nil || !created[1] || jobs[1].ID == old.ID {
		t.Fatalf("ordinary claim behind a replay-only one: %v created=%v err=%v; want a new job", jobs[1], created[1], errs[1])
	}
	if errs[0] != nil || created[0] || jobs[0].ID != jobs[1].ID {
		t.Fatalf("replay-only claim beside it: %v created=%v err=%v; want the new job %s", jobs[0], created[0], errs[0], jobs[1].ID)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'shared'`); n != 2 {
		t.Fatalf("%d jobs; want 2 (the expired one and its successor)", n)
	}
}
