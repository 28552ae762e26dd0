package webhook

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// simJob is one delivery job in simQueue.
type simJob struct {
	id    int64
	owner string
	due   time.Time
}

// simQueue plays River's one queue of deliveries on a simulated clock: every
// cooldown a fetch takes the due jobs, oldest first (due, then id), up to the
// free workers; each fetched job runs the worker's admission (back, acquire,
// snooze) as Worker.Work does, and holds a worker for its owner's try
// duration. It counts the fetches of each owner's jobs. The jobs are kept in a
// heap, so that a backlog of tens of thousands costs each step only what it
// fetches; took may change between steps (an endpoint that recovers).
type simQueue struct {
	slots    *ownerSlots
	workers  int
	cooldown time.Duration
	took     map[string]time.Duration // each owner's try duration
	now      time.Time
	jobs     simJobs
	nextID   int64
	busy     []simTry
	fetched  map[string]int
	done     map[int64]bool
	left     map[string]int // each owner's jobs not yet delivered
}

type simJobs []*simJob

func (h simJobs) Len() int { return len(h) }
func (h simJobs) Less(i, j int) bool {
	return cmp.Or(h[i].due.Compare(h[j].due), cmp.Compare(h[i].id, h[j].id)) < 0
}
func (h simJobs) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *simJobs) Push(x any)   { *h = append(*h, x.(*simJob)) }
func (h *simJobs) Pop() any {
	old := *h
	j := old[len(old)-1]
	*h = old[:len(old)-1]
	return j
}

func newSimQueue(workers, limit int, took map[string]time.Duration) *simQueue {
	return &simQueue{
		slots:    &ownerSlots{limit: limit, shared: workers - ownerReserve(workers, limit)},
		workers:  workers,
		cooldown: 50 * time.Millisecond,
		took:     took,
		now:      time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		fetched:  map[string]int{},
		done:     map[int64]bool{},
		left:     map[string]int{},
	}
}

func (q *simQueue) add(owner string) int64 {
	q.nextID++
	heap.Push(&q.jobs, &simJob{id: q.nextID, owner: owner, due: q.now})
	q.left[owner]++
	return q.nextID
}

// step advances the clock by one cooldown: tries that ended free their
// workers, then one fetch of the due jobs, oldest first, up to the free
// workers each run through the worker's admission.
func (q *simQueue) step() {
	q.now = q.now.Add(q.cooldown)
	busy := q.busy[:0]
	for _, t := range q.busy {
		if !t.end.After(q.now) {
			q.slots.done(t.owner, t.start, t.end)
		} else {
			busy = append(busy, t)
		}
	}
	q.busy = busy
	var snoozed []*simJob
	for free := q.workers - len(q.busy); free > 0 && len(q.jobs) > 0 && !q.jobs[0].due.After(q.now); free-- {
		j := heap.Pop(&q.jobs).(*simJob)
		q.fetched[j.owner]++
		turned := q.slots.back(j.id)
		if ok, wait := q.slots.acquire(j.owner, q.now); !ok {
			j.due = q.now.Add(q.slots.snooze(j.owner, j.id, turned, q.now, wait))
			snoozed = append(snoozed, j)
			continue
		}
		q.busy = append(q.busy, simTry{owner: j.owner, start: q.now, end: q.now.Add(q.took[j.owner])})
		q.done[j.id] = true
		q.left[j.owner]--
	}
	for _, j := range snoozed {
		heap.Push(&q.jobs, j)
	}
}

// steps runs the queue for d of the simulated clock.
func (q *simQueue) steps(d time.Duration) {
	for range int(d / q.cooldown) {
		q.step()
	}
}

type simTry struct {
	owner      string
	start, end time.Time
}

// The reviewer's case, on River's fetch order: an owner over its limit whose
// endpoint answers in a second holds a backlog of 1,000 waiting deliveries
// and gets 20 more a second; another owner's event, one every 4 s, is
// fetched within a bounded number of the slow owner's fetches. Before, a
// waiting delivery came back every 0.25–2 s whatever the backlog: the slow
// owner's due snoozes took nearly every fetch, the other owner's events
// sorted behind them, each later than the one before (4.6 s, 8 s … 29.6 s
// measured), and here hundreds of the slow owner's fetches went before each.
// Counted in fetches on a simulated clock, not timed.
func TestOwnerBacklogDoesNotHoldUpOtherOwners(t *testing.T) {
	const workers, limit = 4, 1
	q := newSimQueue(workers, limit, map[string]time.Duration{"slow": time.Second, "ok": 0})
	for range 1000 {
		q.add("slow")
	}
	// Every waiting delivery fetched once (about 1,000 / 3 a fetch), and
	// then some: the backlog is snoozed, a delivery a second runs.
	for range 1000 {
		q.step()
	}
	most := 0
	defer func() { t.Logf("at most %d of the slow owner's fetches before the other owner's event", most) }()
	for round := range 15 {
		id := q.add("ok")
		before := q.fetched["slow"]
		for steps := 0; !q.done[id]; steps++ {
			if steps > 10_000 {
				t.Fatalf("round %d: the other owner's event was never fetched", round)
			}
			for range 20 / int(time.Second/q.cooldown) { // 20 a second: one per step
				q.add("slow")
			}
			q.step()
		}
		n := q.fetched["slow"] - before
		most = max(most, n)
		if n > 40 {
			t.Fatalf("round %d: the slow owner's deliveries were fetched %d times before the other owner's event (want at most 40): "+
				"its backlog crowds other owners out of the shared queue", round, n)
		}
		for range 4 * int(time.Second/q.cooldown) { // the next event in 4 s
			for range 20 / int(time.Second/q.cooldown) {
				q.add("slow")
			}
			q.step()
		}
	}
}

// countingStore is the real store (a test database) counting its reads of
// events.
type countingStore struct {
	*store.Store
	reads int
}

func (c *countingStore) ClaimEventForDelivery(ctx context.Context, id string, claim store.SendClaim) (*store.Event, *store.Webhook, *store.Job, error) {
	c.reads++
	return c.Store.ClaimEventForDelivery(ctx, id, claim)
}

// A delivery whose job's args name its owner (the outbox writes it,
// migration 0026) is snoozed, when the owner has no free slot, without a read
// of its event; one queued before, without it, is read first, as before.
func TestOverLimitDeliverySnoozedWithoutRead(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"slow": "http://127.0.0.1:1/"}); err != nil {
		t.Fatal(err)
	}
	// A cancelled job of owner slow: the outbox writes its event.
	jobID := cancelledJob(t, db, "slow")
	evs, err := db.Store.JobEvents(ctx, "slow", jobID)
	if err != nil || len(evs) != 1 {
		t.Fatalf("the cancelled job's events: %d, %v; want one", len(evs), err)
	}
	st := &countingStore{Store: db.Store}
	w := NewWorker(st, Config{Secrets: map[string]string{"slow": "whsec_c2VjcmV0"}})
	w.owners.limit = 1
	if ok, _ := w.owners.acquire("slow", time.Now()); !ok {
		t.Fatal("a free slot refused")
	}
	job := &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 7}, Args: DeliverArgs{EventID: evs[0].ID, Owner: "slow"}}
	var snooze *rivertype.JobSnoozeError
	if err := w.Work(ctx, job); !errors.As(err, &snooze) {
		t.Fatalf("Work: %v, want a snooze", err)
	}
	if st.reads != 0 {
		t.Errorf("the event was read %d times before its snooze, want none", st.reads)
	}
	job = &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 8}, Args: DeliverArgs{EventID: evs[0].ID}}
	if err := w.Work(ctx, job); !errors.As(err, &snooze) || st.reads != 1 {
		t.Fatalf("a job without its owner: %v after %d reads, want a snooze after one", err, st.reads)
	}
	if p := w.owners.pace["slow"]; p == nil || p.waiting != 2 {
		t.Errorf("owner's pace %+v, want 2 waiting", p)
	}
}

// The longer waits cost the waiting owner little of its own pace: a backlog
// of 300 behind an endpoint that answers in a second, one at a time, is
// worked through in about 300 s of the simulated clock, its waiting
// deliveries coming back about as its slot frees, a few fetches each.
func TestOwnerBacklogStillDrains(t *testing.T) {
	const workers, limit = 4, 1
	q := newSimQueue(workers, limit, map[string]time.Duration{"slow": time.Second})
	for range 300 {
		q.add("slow")
	}
	start := q.now
	for len(q.done) < 300 {
		if q.now.Sub(start) > time.Hour {
			t.Fatalf("%d of 300 delivered in an hour", len(q.done))
		}
		q.step()
	}
	took := q.now.Sub(start)
	t.Logf("300 deliveries of 1 s, one at a time: %s, %d fetches", took, q.fetched["slow"])
	if took > 400*time.Second {
		t.Errorf("the backlog took %s, want at most 400s: its slot stood idle a quarter of the time", took)
	}
	// Before, each waiting delivery came back every 0.25–2 s: 16,747
	// fetches for the 300.
	if n := q.fetched["slow"]; n > 5*300 {
		t.Errorf("%d fetches for 300 deliveries, want at most 1,500", n)
	}
}
