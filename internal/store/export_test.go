package store

import "context"

// ClaimOneBatch runs njs as one claim batch, synchronously, and returns each
// caller's outcome in order, exactly as CreateJob would report it.
func (s *Store) ClaimOneBatch(ctx context.Context, njs []NewJob) (jobs []*Job, created []bool, errs []error) {
	reqs := make([]*claimRequest, len(njs))
	for i, nj := range njs {
		if len(nj.Params) == 0 {
			nj.Params = []byte("{}")
		}
		reqs[i] = newClaim(nj)
	}
	s.execClaims(ctx, reqs)
	for _, r := range reqs {
		j, c, err := s.claimOutcome(ctx, r)
		jobs, created, errs = append(jobs, j), append(created, c), append(errs, err)
	}
	return jobs, created, errs
}

// SetAfterClaimCommit installs a hook run after a claim batch commits and
// before its callers are told (a crash there is simulated by never returning).
func (s *Store) SetAfterClaimCommit(f func(firstKey string)) { s.afterClaimCommit = f }

// SetOnPlan installs a hook that sees the plan of every batched statement
// (claim, win), made in its transaction with its arguments.
func (s *Store) SetOnPlan(f func(plan []byte)) { s.onPlan = f }
