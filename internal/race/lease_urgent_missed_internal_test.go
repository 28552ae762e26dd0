package race

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Two late-claimed jobs are urgent at once; another transaction holds A's
// attempt row past the urgent budget. The waiting renewal fails for both,
// and the skipping one that follows renews every row of B. The retries,
// waiting again, must then be sent for A alone: B's leases were renewed, and
// resending B would wait for nothing, count failures against a job that had
// none (urgentFailed) and keep B's mark past its renewal.
func TestUrgentRetryResendsOnlyTheMissedJobs(t *testing.T) {
	const lease = 6 * time.Second // ticks of 2 s; an urgent renewal is given 667 ms
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	waits := &waitingRenewals{sent: make(chan []string, 8)}
	cfg.ConnConfig.Tracer = waits
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool, store.Options{})
	t.Cleanup(st.Close)
	r := New(Config{Store: st, Lease: lease, LeaseOwner: "me"})
	t.Cleanup(func() {
		r.cancelBase(errShutdown)
		r.keeperWG.Wait()
	})
	input := []byte(`{"subject":"Login","body":"I cannot log in."}`)
	mk := func(key string) *store.Job {
		nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: key, PromptVersion: "3", Route: "default",
			Input: input, LeaseOwner: "me", LeaseFor: lease,
			First: &store.FirstAttempt{Provider: "primary", Model: "m", Role: store.RolePrimary}}
		nj.Fingerprint, _ = store.Fingerprint("triage", "", "", input)
		job, created, err := db.Store.CreateJob(ctx, nj)
		if err != nil || !created {
			t.Fatalf("create: %v created=%v", err, created)
		}
		return job
	}
	a, b := mk("urgent-missed-a"), mk("urgent-missed-b")
	holder, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, `SELECT 1 FROM attempts WHERE id = $1 FOR UPDATE`, a.Attempts[0].ID); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-4500 * time.Millisecond) // both claims answered late (one batch)
	r.mu.Lock()
	r.holdLease(a.ID, func(error) {}, since)
	r.holdLease(b.ID, func(error) {}, since)
	urgent := r.running[a.ID].urgent && r.running[b.ID].urgent
	r.mu.Unlock()
	if !urgent {
		t.Fatal("the late-claimed jobs were not marked urgent: the rig is wrong")
	}
	first := <-waits.sent
	both := []string{a.ID, b.ID}
	slices.Sort(both)
	if !slices.Equal(first, both) {
		t.Fatalf("the first waiting renewal was sent for %v, want both urgent jobs %v: the rig is wrong", first, both)
	}
	retried := <-waits.sent
	if !slices.Equal(retried, []string{a.ID}) {
		t.Fatalf("the waiting renewal was tried again for %v, want only job A %s, whose row is held: job B %s had every row renewed "+
			"by the skipping renewal that followed the first failure", retried, a.ID, b.ID)
	}
	r.mu.Lock()
	rb := r.running[b.ID]
	r.mu.Unlock()
	if rb.urgent || rb.urgentFailed != 0 {
		t.Fatalf("job B, renewed, is urgent=%v with %d failed urgent renewals counted; want its mark cleared and none counted", rb.urgent, rb.urgentFailed)
	}
}

// waitingRenewals sends on sent the job ids of each waiting lease renewal
// (store.RenewLeasesWaiting) as it goes out.
type waitingRenewals struct {
	sent chan []string
}

func (w *waitingRenewals) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if data.Batch == nil || !isRenewalBatch(data.Batch) {
		return ctx
	}
	for _, q := range data.Batch.QueuedQueries {
		if strings.Contains(q.SQL, "UPDATE jobs SET lease_expires_at") && !strings.Contains(q.SQL, "SKIP LOCKED") {
			ids := slices.Clone(q.Arguments[0].([]string))
			slices.Sort(ids)
			select {
			case w.sent <- ids:
			default:
			}
		}
	}
	return ctx
}

func (w *waitingRenewals) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (w *waitingRenewals) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (w *waitingRenewals) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (w *waitingRenewals) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
