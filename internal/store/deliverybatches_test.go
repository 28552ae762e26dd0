package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// events makes n completion events of a webhook owner (cancelled jobs).
func events(t *testing.T, st *store.Store, db *testdb.DB, n int) []string {
	t.Helper()
	ctx := context.Background()
	if err := st.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://acme.example/hook"}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range n {
		j, _, err := st.CreateJob(ctx, newJob(t, "acme", "triage", "ev-"+itoa(i), `{"i":`+itoa(i)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.CancelJob(ctx, "acme", j.ID); err != nil {
			t.Fatal(err)
		}
		var ev string
		if err := db.Pool.QueryRow(ctx, `SELECT id::text FROM job_events WHERE job_id = $1`, j.ID).Scan(&ev); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ev)
	}
	return ids
}

type deliveryObserver struct {
	mu          sync.Mutex
	batches     []int
	readBatches []int
	durable     int
}

func (o *deliveryObserver) DurableCommit() { o.mu.Lock(); o.durable++; o.mu.Unlock() }
func (o *deliveryObserver) Batch(kind string, size int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch kind {
	case "delivery":
		o.batches = append(o.batches, size)
	case "delivery_read":
		o.readBatches = append(o.readBatches, size)
	}
}

// Concurrent webhook deliveries' writes — bodies frozen before a first try,
// tries recorded after — go out in one batch: one round trip and one commit
// for all of them, and each caller still gets its own outcome.
func TestDeliveryWritesShareOneCommit(t *testing.T) {
	db := testdb.New(t, store.Options{})
	obs := &deliveryObserver{}
	st := store.New(db.Pool, store.Options{Observer: obs})
	ctx := context.Background()
	ev := events(t, st, db, 4)
	if _, err := st.FreezeEventBody(ctx, ev[1], []byte(`{"old":true}`)); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	obs.batches, obs.durable = nil, 0
	obs.mu.Unlock()

	const writes = 5
	leading, all := make(chan struct{}), make(chan struct{})
	st.SetDeliveryBatchHooks(func() {
		close(leading)
		<-all // hold the first caller's batch until every write is queued
	}, func(n int) {
		if n == writes {
			close(all)
		}
	})
	var wg sync.WaitGroup
	var fresh, kept, missing []byte
	var freshErr, keptErr, missingErr, deliveredErr, failedErr error
	firstDone := make(chan struct{})
	wg.Go(func() {
		defer close(firstDone)
		fresh, freshErr = st.FreezeEventBody(ctx, ev[0], []byte(`{"fresh":true}`))
	})
	select {
	case <-leading:
	case <-firstDone:
		t.Fatal("a lone write went out without leading a batch")
	}
	wg.Go(func() { kept, keptErr = st.FreezeEventBody(ctx, ev[1], []byte(`{"new":true}`)) })
	wg.Go(func() {
		missing, missingErr = st.FreezeEventBody(ctx, "00000000-0000-4000-8000-000000000001", []byte(`{}`))
	})
	wg.Go(func() {
		_, deliveredErr = st.RecordDelivery(ctx, store.DeliveryTry{EventID: ev[2], Try: 1, URL: "https://acme.example/hook",
			StartedAt: time.Now(), Latency: 12 * time.Millisecond, StatusCode: 204, Status: store.EventDelivered})
	})
	wg.Go(func() {
		_, failedErr = st.RecordDelivery(ctx, store.DeliveryTry{EventID: ev[3], Try: 1, URL: "https://acme.example/hook",
			StartedAt: time.Now(), Latency: 30 * time.Millisecond, Error: "no answer", Status: store.EventPending})
	})
	wg.Wait()

	if freshErr != nil || string(fresh) != `{"fresh":true}` {
		t.Errorf("fresh freeze: %s %v", fresh, freshErr)
	}
	if keptErr != nil || string(kept) != `{"old":true}` {
		t.Errorf("second freeze of a frozen body: %s %v, want the first body kept", kept, keptErr)
	}
	if !errors.Is(missingErr, store.ErrNotFound) || missing != nil {
		t.Errorf("freeze of no event: %s %v, want ErrNotFound", missing, missingErr)
	}
	if deliveredErr != nil || failedErr != nil {
		t.Fatalf("records: %v, %v", deliveredErr, failedErr)
	}
	got, err := st.JobEvents(ctx, "acme", jobOf(t, db, ev[2]))
	if err != nil || len(got) != 1 || got[0].Status != store.EventDelivered || len(got[0].Deliveries) != 1 || got[0].Deliveries[0].StatusCode == nil {
		t.Fatalf("delivered event: %+v %v", got, err)
	}
	got, err = st.JobEvents(ctx, "acme", jobOf(t, db, ev[3]))
	if err != nil || len(got) != 1 || got[0].Status != store.EventPending || len(got[0].Deliveries) != 1 || got[0].Deliveries[0].Error == nil {
		t.Fatalf("failed try: %+v %v", got, err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.batches) != 1 || obs.batches[0] != writes || obs.durable != 1 {
		t.Fatalf("batches %v with %d durable commits, want one batch of %d writes and one commit", obs.batches, obs.durable, writes)
	}
}

// A batch that fails (a try of an event that no longer exists breaks its
// foreign key) fails only the write at fault: the others are carried out on
// their own.
func TestDeliveryWriteFailureIsItsOwn(t *testing.T) {
	db := testdb.New(t, store.Options{})
	st := db.Store
	ctx := context.Background()
	ev := events(t, st, db, 2)
	bodies, freezeErrs, tryErrs := st.DeliveryBatch(ctx,
		[]store.FreezeArg{{EventID: ev[0], Body: []byte(`{"a":1}`)}},
		[]store.DeliveryTry{
			{EventID: "00000000-0000-4000-8000-000000000002", Try: 1, URL: "https://acme.example/hook", StartedAt: time.Now(), StatusCode: 204, Status: store.EventDelivered},
			{EventID: ev[1], Try: 1, URL: "https://acme.example/hook", StartedAt: time.Now(), StatusCode: 204, Status: store.EventDelivered},
		})
	if freezeErrs[0] != nil || string(bodies[0]) != `{"a":1}` {
		t.Errorf("freeze beside a failing try: %s %v", bodies[0], freezeErrs[0])
	}
	if tryErrs[0] == nil || !strings.Contains(tryErrs[0].Error(), "foreign key") {
		t.Errorf("try of no event: %v, want its foreign key violation", tryErrs[0])
	}
	if tryErrs[1] != nil {
		t.Errorf("try beside a failing one: %v", tryErrs[1])
	}
	got, err := st.JobEvents(ctx, "acme", jobOf(t, db, ev[1]))
	if err != nil || len(got) != 1 || got[0].Status != store.EventDelivered || len(got[0].Deliveries) != 1 {
		t.Fatalf("the other try: %+v %v", got, err)
	}
}

func jobOf(t *testing.T, db *testdb.DB, eventID string) string {
	t.Helper()
	var id string
	if err := db.Pool.QueryRow(context.Background(), `SELECT job_id::text FROM job_events WHERE id = $1`, eventID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func (o *deliveryObserver) reads() []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]int(nil), o.readBatches...)
}

// Concurrent deliveries' reads of their events go out in one round trip, and
// each gets its own event, webhook and (before the first try) job.
func TestEventReadsShareOneRoundTrip(t *testing.T) {
	db := testdb.New(t, store.Options{})
	obs := &deliveryObserver{}
	st := store.New(db.Pool, store.Options{Observer: obs})
	ctx := context.Background()
	ev := events(t, st, db, 2)
	if _, err := st.FreezeEventBody(ctx, ev[1], []byte(`{"frozen":true}`)); err != nil {
		t.Fatal(err)
	}
	const reads = 3
	leading, all := make(chan struct{}), make(chan struct{})
	st.SetEventReadHooks(func() {
		close(leading)
		<-all
	}, func(n int) {
		if n == reads {
			close(all)
		}
	})
	type got struct {
		ev  *store.Event
		wh  *store.Webhook
		job *store.Job
		err error
	}
	var first, frozen, missing got
	var wg sync.WaitGroup
	firstDone := make(chan struct{})
	wg.Go(func() {
		defer close(firstDone)
		first.ev, first.wh, first.job, first.err = st.EventForDelivery(ctx, ev[0])
	})
	select {
	case <-leading:
	case <-firstDone:
		t.Fatal("a lone read went out without leading a batch")
	}
	wg.Go(func() { frozen.ev, frozen.wh, frozen.job, frozen.err = st.EventForDelivery(ctx, ev[1]) })
	wg.Go(func() {
		missing.ev, missing.wh, missing.job, missing.err = st.EventForDelivery(ctx, "00000000-0000-4000-8000-000000000003")
	})
	wg.Wait()

	if first.err != nil || first.ev.ID != ev[0] || first.ev.Body != nil || first.wh == nil || first.wh.URL != "https://acme.example/hook" {
		t.Fatalf("unfrozen event: %+v %+v %v", first.ev, first.wh, first.err)
	}
	if first.job == nil || first.job.ID != jobOf(t, db, ev[0]) || first.job.State != store.JobCancelled || first.job.Attempts == nil || first.job.RaceEvents == nil {
		t.Fatalf("unfrozen event's job: %+v", first.job)
	}
	if frozen.err != nil || frozen.ev.ID != ev[1] || string(frozen.ev.Body) != `{"frozen":true}` || frozen.job != nil || frozen.wh == nil {
		t.Fatalf("frozen event: %+v job %+v %v", frozen.ev, frozen.job, frozen.err)
	}
	if !errors.Is(missing.err, store.ErrNotFound) {
		t.Fatalf("no event: %v, want ErrNotFound", missing.err)
	}
	if b := obs.reads(); len(b) != 1 || b[0] != reads {
		t.Fatalf("read batches %v, want one of %d", b, reads)
	}
}
