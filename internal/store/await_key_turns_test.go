package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/store"
)

// inFlightKeyClaim stands in for a claim of key still committing (on this
// replica or another): an open transaction, outside st's pool, that has
// inserted the job jobID and its key row, not yet committed.
func inFlightKeyClaim(t *testing.T, b *bundle, jobID, key string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, _ := b.begin(t)
	nj := newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`)
	if _, err := tx.Exec(ctx, `INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state)
		VALUES ($1, 'acme', 'triage', $2, $3, '1', 'default', $4::jsonb, 'pending')`, jobID, key, nj.Fingerprint, string(nj.Input)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (owner, operation, idempotency_key, job_id, fingerprint)
		VALUES ('acme', 'triage', $1, $2, $3)`, key, jobID, nj.Fingerprint); err != nil {
		t.Fatal(err)
	}
	return tx
}

// A refusal that says "nothing was stored" (422 unknown prompt or version,
// input too long, 503 no-eligible-provider) first waits for any claim of its
// key still committing (AwaitKeyHeld, AwaitJobHoldingKey). That wait took
// one of the claims' alone turns every time, though in the common case no
// transaction writes the key: a storm of such refusals (every breaker open,
// no provider eligible for anyone) used up the turns, the refusals were
// answered 503 busy ("no turn to wait alone") instead of their own answer,
// and a claim of a key genuinely held waited for a turn behind them. Now the
// look-up tries first with the batches' short lock wait, taking no turn, and
// goes alone only when it finds the key's row still held.
//
// Here every alone turn is taken by look-ups of keys whose claims are still
// committing (and wait for them as before, seeing their commit); the
// look-ups of keys nobody writes answer at once. Should one of them wait for
// a turn, the hook that sees it ends its wait (the answer is then busy).
func TestAwaitKeyNotHeldTakesNoAloneTurn(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	_, st := modeStore(t, b, "cache_statement", 4)
	turns := st.AloneTurns()

	done, created, err := st.CreateJob(ctx, newJob(t, "acme", "triage", "done", `{"k":"done"}`))
	if err != nil || !created {
		t.Fatalf("create: created %v, err %v", created, err)
	}

	defer store.SetAloneLockWait(10 * time.Minute)()
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	var holders []pgx.Tx
	results := make(chan error, turns)
	for i := range turns {
		key := fmt.Sprintf("held-%d", i)
		holders = append(holders, inFlightKeyClaim(t, b, fmt.Sprintf("0190bbbb-0000-7000-8000-%012d", i), key))
		go func() {
			held, err := st.AwaitKeyHeld(guard, "acme", "triage", key)
			if err == nil && !held {
				err = fmt.Errorf("%s: the claim committed, and the look-up that waited for it says the key holds no job", key)
			}
			results <- err
		}()
	}
	// Every turn is taken by a look-up waiting for its key's row (a state,
	// polled).
	for st.AloneTurnsTaken() < turns {
		if guard.Err() != nil {
			t.Fatalf("the look-ups of the held keys never took the %d alone turns", turns)
		}
		time.Sleep(5 * time.Millisecond)
	}

	var waited atomic.Int32
	lookCtx, endLook := context.WithCancel(guard)
	defer endLook()
	st.SetOnAloneTurnWait(func() { waited.Add(1); endLook() })
	t.Cleanup(func() { st.SetOnAloneTurnWait(nil) })

	if held, err := st.AwaitKeyHeld(lookCtx, "acme", "triage", "free"); err != nil || held {
		t.Fatalf("a key nobody writes, every alone turn taken: held %v, err %v; want false and no error at once\n"+
			"the look-up waits for an alone turn though no transaction holds the key's row", held, err)
	}
	if held, err := st.AwaitKeyHeld(lookCtx, "acme", "triage", "done"); err != nil || !held {
		t.Fatalf("a key bound to a committed job, every alone turn taken: held %v, err %v; want true", held, err)
	}
	if j, err := st.AwaitJobHoldingKey(lookCtx, "acme", "triage", "done", newJob(t, "acme", "triage", "done", `{"k":"done"}`).Fingerprint); err != nil || j.ID != done.ID {
		t.Fatalf("the job of a key nobody writes, every alone turn taken: %v, err %v; want job %s", j, err, done.ID)
	}
	if n := waited.Load(); n != 0 {
		t.Fatalf("%d look-ups of keys nobody writes waited for an alone turn", n)
	}

	// The look-ups of the held keys still wait for their claims, and see
	// them commit.
	for _, tx := range holders {
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range turns {
		if err := <-results; err != nil {
			t.Fatalf("a look-up of a key whose claim was committing: %v", err)
		}
	}
}

// A key row still held past the look-up's waits (its first try's, then its
// alone turn's) is ErrBusy, a *BusyError naming the key, as before: the
// outcome is not known. Once the holder rolls back, the key holds nothing,
// and the look-up's own inserts left no row.
func TestAwaitKeyStillHeldIsBusy(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	defer store.SetAloneLockWait(200 * time.Millisecond)()
	tx := inFlightKeyClaim(t, b, "0190bbbb-0000-7000-8000-00000000000f", "held")

	busy := func(what string, err error) {
		t.Helper()
		var be *store.BusyError
		if !errors.Is(err, store.ErrBusy) || !errors.As(err, &be) || !strings.Contains(be.What, `"held"`) {
			t.Fatalf("%s of a key row still held: err %v; want a *BusyError naming the key", what, err)
		}
	}
	held, err := b.st.AwaitKeyHeld(ctx, "acme", "triage", "held")
	if held {
		t.Fatal("AwaitKeyHeld of a key row still held says held")
	}
	busy("AwaitKeyHeld", err)
	_, err = b.st.AwaitJobHoldingKey(ctx, "acme", "triage", "held", newJob(t, "acme", "triage", "held", `{"k":"held"}`).Fingerprint)
	busy("AwaitJobHoldingKey", err)

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if held, err := b.st.AwaitKeyHeld(ctx, "acme", "triage", "held"); err != nil || held {
		t.Fatalf("the claim rolled back: held %v, err %v; want false", held, err)
	}
	if n := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'held'`); n != 0 {
		t.Fatalf("the look-ups left %d key rows", n)
	}
}
