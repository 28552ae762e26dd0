package store

import (
	"context"
	"slices"
	"testing"
)

// A burst of first tries of large jobs freezes their bodies through the
// deliveries' batches: capped by count alone, 64 bodies of several MiB went
// out as one bytea array (past PostgreSQL's 1 GB limit on a value, and all
// in memory at once). A batch stops before its bodies pass
// deliveryBatchBytes; a body larger than that goes alone; records are light.
func TestDeliveryBatchesAreCappedByTheirBodiesBytes(t *testing.T) {
	s := New(nil, Options{}) // no pool: exec is replaced below
	var sizes []int
	s.deliveries.exec = func(_ context.Context, batch []*deliveryWrite) { sizes = append(sizes, len(batch)) }
	freeze := func(n int) *deliveryWrite {
		return &deliveryWrite{freeze: &freezeRequest{id: "e", body: make([]byte, n)}}
	}
	record := func() *deliveryWrite { return &deliveryWrite{record: &DeliveryTry{EventID: "e"}} }
	big := deliveryBatchBytes * 5 / 8
	s.deliveries.queue = []*deliveryWrite{
		freeze(big), freeze(big), // two do not fit together
		freeze(big), record(), record(), // a body and records do
		freeze(3 * deliveryBatchBytes), // larger than a batch: alone
		freeze(10), freeze(10), record(),
	}
	s.deliveries.leaders = 1 // as a leader calling next would be counted
	for s.deliveries.next() {
	}
	if want := []int{1, 1, 3, 1, 3}; !slices.Equal(sizes, want) {
		t.Fatalf("batch sizes %v, want %v: a batch must stop before its bodies pass %d bytes", sizes, want, deliveryBatchBytes)
	}
}

// Two large bodies that cannot share a batch are a full batch waiting, as 64
// writes are: while one batch runs, another leader takes the next (up to
// maxLeaders), rather than large bodies going out one after another.
func TestDeliveryBatchesOfLargeBodiesGoOutSideBySide(t *testing.T) {
	s := New(nil, Options{})
	started, release := make(chan struct{}, 4), make(chan struct{})
	s.deliveries.exec = func(_ context.Context, batch []*deliveryWrite) {
		started <- struct{}{}
		<-release
		for _, w := range batch {
			close(w.done)
		}
	}
	big := func() *deliveryWrite {
		return &deliveryWrite{freeze: &freezeRequest{id: "e", body: make([]byte, deliveryBatchBytes*5/8)}, done: make(chan struct{})}
	}
	first := big()
	go s.deliveries.enqueue(first) // leads itself, held in exec
	<-started
	second, third := big(), big()
	s.deliveries.enqueue(second) // the leader's next batch
	s.deliveries.enqueue(third)  // more than that batch carries: another leader
	<-started                    // a second batch runs while the first is held
	close(release)
	for _, w := range []*deliveryWrite{first, second, third} {
		<-w.done
	}
}
