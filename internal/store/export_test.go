package store

import (
	"context"
	"time"
)

// ClaimOneBatch runs njs as one claim batch, synchronously, and returns each
// caller's outcome in order, exactly as CreateJob would report it.
func (s *Store) ClaimOneBatch(ctx context.Context, njs []NewJob) (jobs []*Job, created []bool, errs []error) {
	return s.claimOneBatch(ctx, njs, s.execClaims)
}

// ClaimOneBatchWaiting is ClaimOneBatch whose batch waits up to lockWait for
// a row another transaction holds, in batchLockWait's place (execClaims with
// that wait): a test that commits the holder once the batch waits on it
// (pg_stat_activity) sees the batch go on after the commit however long a
// loaded machine takes to commit, rather than fail busy past 100 ms.
func (s *Store) ClaimOneBatchWaiting(ctx context.Context, njs []NewJob, lockWait time.Duration) (jobs []*Job, created []bool, errs []error) {
	return s.claimOneBatch(ctx, njs, func(ctx context.Context, reqs []*claimRequest) {
		cb := groupClaims(reqs)
		s.runClaims(ctx, cb.firsts, lockWait)
		cb.finish()
	})
}

func (s *Store) claimOneBatch(ctx context.Context, njs []NewJob, exec func(context.Context, []*claimRequest)) (jobs []*Job, created []bool, errs []error) {
	reqs := make([]*claimRequest, len(njs))
	for i, nj := range njs {
		if len(nj.Params) == 0 {
			nj.Params = []byte("{}")
		}
		reqs[i] = newClaim(nj)
	}
	exec(ctx, reqs)
	for _, r := range reqs {
		j, c, err := s.claimOutcome(ctx, r)
		jobs, created, errs = append(jobs, j), append(created, c), append(errs, err)
	}
	return jobs, created, errs
}

// SetAfterClaimCommit installs a hook run after a claim batch commits and
// before its callers are told (a crash there is simulated by never returning).
func (s *Store) SetAfterClaimCommit(f func(firstKey string)) { s.afterClaimCommit = f }

// SetOnLostClaim installs a hook told how the background hand-over of a
// claim whose outcome was lost ended.
func (s *Store) SetOnLostClaim(f func(err error)) { s.onLostClaim = f }

// LostClaims is how many claims CreateJob has handed to handOverLostClaim.
func (s *Store) LostClaims() int64 { return s.lostClaims.Load() }

// SetOnPlan installs a hook that sees the plan of every batched statement
// (claim, win), made in its transaction with its arguments.
func (s *Store) SetOnPlan(f func(plan []byte)) { s.onPlan = f }

// SetOnBatched sets a hook told of each batched transaction sent, with its
// statements.
func (s *Store) SetOnBatched(f func(stmts int)) { s.onBatched = f }

// PathBatch runs njs' claims and cs' wins as one batch of the success path's
// commits, synchronously, and returns each claim's outcome (as CreateJob
// reports it) and each win's.
func (s *Store) PathBatch(ctx context.Context, njs []NewJob, cs []Completion) (created []bool, claimErrs []error, won []bool, winErrs []error) {
	var batch []*pathCommit
	var claims []*claimRequest
	var wins []*winRequest
	for _, nj := range njs {
		if len(nj.Params) == 0 {
			nj.Params = []byte("{}")
		}
		c := newClaim(nj)
		claims = append(claims, c)
		batch = append(batch, &pathCommit{claim: c})
	}
	for _, c := range cs {
		w := &winRequest{c: c, done: make(chan struct{})}
		wins = append(wins, w)
		batch = append(batch, &pathCommit{win: w})
	}
	s.execPathCommits(ctx, batch)
	for _, c := range claims {
		_, ok, err := s.claimOutcome(ctx, c)
		created, claimErrs = append(created, ok), append(claimErrs, err)
	}
	for _, w := range wins {
		won, winErrs = append(won, w.won), append(winErrs, w.err)
	}
	return created, claimErrs, won, winErrs
}

// SetBeforeRiverWake installs a hook run before each River notification the
// store sends after batched wins (outboxWake).
func (s *Store) SetBeforeRiverWake(f func()) { s.wake.beforeSend = f }

// RiverWakesAsked is how many times batched wins asked for River's
// notification.
func (s *Store) RiverWakesAsked() int64 {
	s.wake.mu.Lock()
	defer s.wake.mu.Unlock()
	return s.wake.asked
}

// SetDeliveryBatchHooks installs the webhook delivery writes' test hooks: run
// when a caller has become the leader, before it takes its batch; and told
// the queue's length after each enqueue.
func (s *Store) SetDeliveryBatchHooks(beforeSelfBatch func(), onQueued func(n int)) {
	s.deliveries.beforeSelfBatch, s.deliveries.onQueued = beforeSelfBatch, onQueued
}

// FreezeArg is one freeze of DeliveryBatch.
type FreezeArg struct {
	EventID string
	Body    []byte
}

// DeliveryBatch runs freezes and tries as one batch of webhook delivery
// writes, synchronously, and returns each one's outcome as FreezeEventBody and
// RecordDelivery report it.
func (s *Store) DeliveryBatch(ctx context.Context, freezes []FreezeArg, tries []DeliveryTry) (bodies [][]byte, freezeErrs, tryErrs []error) {
	var batch, fs, ts []*deliveryWrite
	for _, f := range freezes {
		w := &deliveryWrite{freeze: &freezeRequest{id: f.EventID, body: f.Body}, done: make(chan struct{})}
		fs, batch = append(fs, w), append(batch, w)
	}
	for i := range tries {
		w := &deliveryWrite{record: &tries[i], done: make(chan struct{})}
		ts, batch = append(ts, w), append(batch, w)
	}
	s.execDeliveryWrites(ctx, batch)
	for _, w := range fs {
		bodies, freezeErrs = append(bodies, w.freeze.out), append(freezeErrs, w.err)
	}
	for _, w := range ts {
		tryErrs = append(tryErrs, w.err)
	}
	return bodies, freezeErrs, tryErrs
}

// SetEventReadHooks installs the webhook delivery reads' test hooks (see
// SetDeliveryBatchHooks).
func (s *Store) SetEventReadHooks(beforeSelfBatch func(), onQueued func(n int)) {
	s.eventReads.beforeSelfBatch, s.eventReads.onQueued = beforeSelfBatch, onQueued
}

// Canonical is the text FingerprintValue hashes.
var Canonical = canonical

// WindowQueries are the operator's queries over a recent window ($1, an
// interval), by name.
var WindowQueries = map[string]string{
	"ProviderStats":   providerStatsSQL,
	"RecentCounters":  recentCountersSQL,
	"RecentHedgeCost": recentHedgeCostSQL,
}

// WindowQueryArgs are the parameters of a window query after $1, by name.
var WindowQueryArgs = map[string][]any{
	"ProviderStats": {[]string{"p1"}, []string{"alias"}, []string{"p1-alias"}},
}

// SetMigrationLockWait sets how long a migration waits for a lock, how many
// times, and the pause between tries, until the test ends.
func SetMigrationLockWait(wait time.Duration, tries int, pause time.Duration) (restore func()) {
	w, n, p := migrationLockWait, migrationLockTries, migrationLockPause
	migrationLockWait, migrationLockTries, migrationLockPause = wait, tries, pause
	return func() { migrationLockWait, migrationLockTries, migrationLockPause = w, n, p }
}

// SetBeforeSelfBatch installs the path group's beforeSelfBatch hook.
func (s *Store) SetBeforeSelfBatch(f func()) { s.paths.beforeSelfBatch = f }

// SetBeforePathEnqueue installs the path group's beforeEnqueue hook: run as
// a caller of the success path's batches (a claim, its retry, a win) comes
// to enqueue, before it is queued.
func (s *Store) SetBeforePathEnqueue(f func()) { s.paths.beforeEnqueue = f }

// SetOnQueued installs the path group's onQueued hook.
func (s *Store) SetOnQueued(f func(n int)) { s.paths.onQueued = f }
