package race

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A fresh job whose claim answered late is renewed at once by the keeper,
// waiting for a row another transaction holds (holdLease, renewUrgent). When
// that renewal fails without reaching the database (here: held back until its
// budget ran out, as a dial that hangs or is refused), the job stays urgent
// and the keeper tries it again within a third of a tick, instead of leaving
// it to a next tick that comes after the claim's lease has run out: the
// attempt in flight on this live runner would be marked unknown by recovery.
func TestFailedUrgentRenewalIsTriedAgain(t *testing.T) {
	const lease = 6 * time.Second // ticks of 2 s; an urgent renewal is given 667 ms
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	stall := &stallFirstRenewal{}
	cfg.ConnConfig.Tracer = stall
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	r := New(Config{Store: store.New(pool, store.Options{}), Lease: lease, LeaseOwner: "me"})
	t.Cleanup(func() {
		r.cancelBase(errShutdown)
		r.keeperWG.Wait()
	})
	input := []byte(`{"subject":"Login","body":"I cannot log in."}`)
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "urgent-retry", PromptVersion: "3", Route: "default",
		Input: input, LeaseOwner: "me", LeaseFor: lease,
		First: &store.FirstAttempt{Provider: "primary", Model: "m", Role: store.RolePrimary}}
	nj.Fingerprint, _ = store.Fingerprint("triage", "", "", input)
	job, created, err := db.Store.CreateJob(ctx, nj)
	if err != nil || !created {
		t.Fatalf("create: %v created=%v", err, created)
	}
	att := job.Attempts[0].ID
	// Its claim answered 4.5 s late: the leases it set run out 1.5 s from
	// now, before the keeper's first tick (2 s after the submit).
	since := time.Now().Add(-4500 * time.Millisecond)
	for _, q := range []string{`UPDATE jobs SET lease_expires_at = now() + interval '1.5 seconds' WHERE id = $1`,
		`UPDATE attempts SET lease_expires_at = now() + interval '1.5 seconds' WHERE job_id = $1`} {
		if _, err := db.Pool.Exec(ctx, q, job.ID); err != nil {
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	r.holdLease(job.ID, func(error) {}, since)
	urgent := r.running[job.ID].urgent
	r.mu.Unlock()
	if !urgent {
		t.Fatal("the late-claimed job was not marked urgent: the rig is wrong")
	}
	// Just past the claim's lease.
	waitPastClaimLease(t, db, att)
	if !stall.stalled() {
		t.Fatal("no renewal was held back: the rig is wrong")
	}
	state, kind := expiredAttemptState(t, db, att)
	if state != store.AttemptRunning {
		t.Fatalf("the first attempt of a job this live runner holds is %s (%s): its urgent renewal failed and was not tried again "+
			"before the claim's lease ran out; the next tick came after it", state, kind)
	}
}

// stallFirstRenewal holds the first lease renewal back until its context
// ends (a dial or a connection that does not answer): it fails unsent. Later
// renewals go out.
type stallFirstRenewal struct {
	mu   sync.Mutex
	done bool
}

func (s *stallFirstRenewal) stalled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

func (s *stallFirstRenewal) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if data.Batch == nil || !isRenewalBatch(data.Batch) {
		return ctx
	}
	s.mu.Lock()
	first := !s.done
	s.done = true
	s.mu.Unlock()
	if first {
		<-ctx.Done()
	}
	return ctx
}

func isRenewalBatch(b *pgx.Batch) bool {
	for _, q := range b.QueuedQueries {
		if strings.Contains(q.SQL, "UPDATE jobs SET lease_expires_at") && strings.Contains(q.SQL, "UPDATE attempts SET lease_expires_at") {
			return true
		}
	}
	return false
}

func (s *stallFirstRenewal) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (s *stallFirstRenewal) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (s *stallFirstRenewal) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (s *stallFirstRenewal) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
