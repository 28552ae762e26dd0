package store

// Observer counts the store's database work for metrics. Statements and
// transactions are counted by a pgx tracer on the pool (see server wiring);
// what only the store knows — which commits wait for the WAL flush, how many
// jobs one batched statement carried — is reported here.
type Observer interface {
	// DurableCommit is one commit that waited for the WAL flush.
	DurableCommit()
	// Batch is one batched statement of kind ("claim", "win", "renew",
	// "delivery", "delivery_read") that carried size items.
	Batch(kind string, size int)
}

type nopObserver struct{}

func (nopObserver) DurableCommit()    {}
func (nopObserver) Batch(string, int) {}
