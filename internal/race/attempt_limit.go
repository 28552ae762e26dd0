package race

import "github.com/routerhq/router/internal/store"

// attemptsCounted notes made, the count of the round's attempts against
// max_attempts that the store gave with the creation of an attempt this run
// sends (store.CreateAttemptCounted; the job's first attempt, created with
// it: 1). It stays exact while nothing else changes the count: only the
// process holding the job's lease adds attempts (the store fences the
// others), and an attempt stops counting only when it is recorded never sent
// or, unknown, is resolved as never worked on — which this run learns from
// its result (attemptCountUnsure).
func (o *orchestrator) attemptsCounted(made int) {
	o.made, o.madeKnown = made, true
}

// attemptCountUnsure forgets the count: an attempt ended in a way that may
// take it out of the count (never sent, unknown, cancelled), and only the
// next creation says again how many count.
func (o *orchestrator) attemptCountUnsure() {
	o.madeKnown = false
}

// attemptLimitSpent says whether the round's attempts have reached the
// route's max_attempts, as far as this run knows: the store would refuse
// another attempt (store.ErrAttemptLimit). Not known: false, and the store
// decides as the attempt is created.
func (o *orchestrator) attemptLimitSpent() bool {
	return o.madeKnown && o.route.MaxAttempts > 0 && o.made >= o.route.MaxAttempts
}

// stopAtAttemptLimit stops the race as the store's refusal of another
// attempt would (start), with its reason, without waiting for a retry's
// backoff or a circuit breaker only to be refused.
func (o *orchestrator) stopAtAttemptLimit() {
	o.stop(store.AttemptLimitError(o.made, o.route.MaxAttempts).Error())
}
