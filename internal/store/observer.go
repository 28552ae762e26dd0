package store

import "time"

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

// CommitWaitObserver is implemented by an Observer that also wants to know
// how long each claim (CreateJob) and each answer offered to the
// compare-and-swap (CompleteJob) waited for its batched commit, from being
// queued (behind the batch in flight, if any) to its own batch's outcome:
// twice per job on the success path, what the two batched commits add to its
// latency. A batch that failed is not reported (the caller retries or gives
// up). Optional: the store finds it by type assertion on Options.Observer.
type CommitWaitObserver interface {
	// CommitWait is one claim's or win's ("claim", "win") wait.
	CommitWait(kind string, d time.Duration)
}

type nopObserver struct{}

func (nopObserver) DurableCommit()    {}
func (nopObserver) Batch(string, int) {}
