package store

import "context"

// LiveJobStates are the states of the jobs that have not ended, which
// LiveJobs lists.
var LiveJobStates = []string{JobPending, JobRunning, JobUnknown}

// LiveJobs returns, oldest first, up to limit jobs of every owner (or of
// owner, when not empty) whose state is one of states (those of
// LiveJobStates among them; none listed: all of them), with their attempts
// and race events. It is the operator's view of what is still open, above
// all the unknown jobs, which wait for a resolution (SPEC §6.8) that their
// owner may not know to make. It reads live jobs only (the partial index
// jobs_owner_live), never the history.
func (s *Store) LiveJobs(ctx context.Context, states []string, owner string, limit int) ([]*Job, error) {
	if len(states) == 0 {
		states = LiveJobStates
	}
	return s.queryJobs(ctx, `SELECT `+jobColumns+` FROM jobs j
		WHERE j.state IN ('pending', 'running', 'unknown') AND j.state = ANY($1::text[]) AND ($2 = '' OR j.owner = $2)
		ORDER BY j.created_at, j.id LIMIT $3`, states, owner, limit)
}
