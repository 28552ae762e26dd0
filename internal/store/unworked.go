package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// NoRecordNote is the note of reconciliation's `failed` resolution of an
// unknown attempt its provider's lookup has no record of: the provider did
// no work (race's reconcileOne writes it, Unworked reads it).
const NoRecordNote = "reconciled: the provider has no record of this request, so it did no work"

// Kinds of the errors of attempts whose outcome was unknown only because
// their router stopped: recovery's expiry of the lease of a router that died
// or lost the database (lease_expired), and a shutdown's cut before any
// response byte (race.KindShutdown).
const (
	leaseExpiredKind = "lease_expired"
	shutdownKind     = "shutdown"
)

// Unworked reports whether a is an attempt whose outcome was unknown only
// because its router stopped — it died, or lost the database, and the lease
// expired (lease_expired), or it was stopped before any response byte came
// (shutdown) — and that reconciliation then resolved `failed` because the
// provider's lookup has no record of it (NoRecordNote). The provider did no
// work and its target did nothing wrong: such an attempt counts neither
// against max_attempts (CreateAttempt, with unworkedSQL) nor as its target
// tried (race's resumed race), like one never sent (NotSent) — above all the
// first attempt, committed with the job's claim, of a router that died
// before it sent the request (SPEC §6.8: started exactly once).
//
// An attempt that went unknown because its provider did not answer in time
// (a timeout) is not one of them: its lookup's "no record" proves no work was
// done, not that the target is healthy, and it counts as any failure.
func Unworked(a Attempt) bool {
	if a.State != AttemptFailed || len(a.Error) == 0 {
		return false
	}
	var e struct {
		Kind       string `json:"kind"`
		Resolution struct {
			Message string `json:"message"`
		} `json:"resolution"`
	}
	if json.Unmarshal(a.Error, &e) != nil || e.Resolution.Message != NoRecordNote {
		return false
	}
	return e.Kind == leaseExpiredKind || e.Kind == shutdownKind
}

// unworkedSQL is Unworked as a condition on a row of attempts (unqualified
// columns), for the counts that must agree with it.
const unworkedSQL = `(state = 'failed' AND coalesce(error->>'kind', '') IN ('` + leaseExpiredKind + `', '` + shutdownKind + `')
	AND coalesce(error->'resolution'->>'message', '') = '` + NoRecordNote + `')`

// RouterDeathLimit is how many times a job's routers may die (or lose the
// database) in one round of the job — since its creation or its caller's
// latest retry — with an attempt of it started and not yet received by its
// provider, before the job is failed rather than run again. Each such death
// leaves attempts that recovery marks `unknown` (lease_expired) and
// reconciliation resolves `failed` because their provider has no record of
// them (NoRecordNote): unworked, they count neither against max_attempts
// nor as their target tried, and the resumed run has a deadline of its own.
// A job whose own handling kills its router before the send (the memory to
// build a huge request, a crash in an adapter's encoding: a "query of
// death") would otherwise be adopted, and kill its adopter, by replica after
// replica without end. The database keeps the bound (ResolveAttempt counts
// under the job's row lock), across replicas and leaders.
//
// Three: one death is a crash or a restart that hit the job by chance, two
// may be a rolling update or a partition; a third in one round is the job.
const RouterDeathLimit = 3

// routerDeathSQL is the condition on a row of attempts (unqualified columns)
// of an attempt left by a router's death before its send: expired
// lease_expired and resolved with no record (unworkedSQL's lease_expired
// half).
const routerDeathSQL = `(state = 'failed' AND coalesce(error->>'kind', '') = '` + leaseExpiredKind + `'
	AND coalesce(error->'resolution'->>'message', '') = '` + NoRecordNote + `')`

// routerDeathsLocked is, for job jobID whose row tx has locked, the seqs of
// the current round's attempts left by a router's death before its send
// (routerDeathSQL) and how many deaths they are: the distinct routers whose
// leases expired (the lease_expired error's "router", the replica id, unique
// per process), so a hedge in flight beside its primary does not count the
// death twice, even when its lease, taken after the router's last renewal,
// expires a recovery pass later than the primary's. An attempt expired
// before the router was recorded counts by its finished_at (one expiry
// statement's now()).
func routerDeathsLocked(ctx context.Context, tx pgx.Tx, jobID string) (seqs []int, deaths int, err error) {
	err = tx.QueryRow(ctx, `SELECT coalesce(array_agg(seq ORDER BY seq), '{}'),
			count(DISTINCT coalesce('router:' || (error->>'router'), 'at:' || finished_at::text))
		FROM attempts WHERE job_id = $1 AND seq > (SELECT attempt_base FROM jobs WHERE id = $1)
			AND `+routerDeathSQL, jobID).Scan(&seqs, &deaths)
	return seqs, deaths, err
}

// routerDeathsPrefix begins routerDeathsReason.
const routerDeathsPrefix = "the router running this job stopped "

// EndedByRouterDeaths reports whether j is a job ResolveAttempt failed at
// RouterDeathLimit (its reason is routerDeathsReason's).
func EndedByRouterDeaths(j *Job) bool {
	return j != nil && j.State == JobFailed && j.Error != nil && strings.HasPrefix(*j.Error, routerDeathsPrefix)
}

// routerDeathsReason is the reason of a job failed at RouterDeathLimit: its
// attempts seqs were left by deaths deaths of its routers.
func routerDeathsReason(jobID string, seqs []int, deaths int) string {
	return fmt.Sprintf(routerDeathsPrefix+"%d times (it died, or lost the database) after starting "+
		"an attempt and before its provider received the request (%s, kind lease_expired; their providers have no "+
		"record of them): handling this job is likely what stops its router (running out of memory building a large "+
		"request, a crash encoding it), so it is not sent again, to keep it from stopping more routers "+
		"(the limit is %d per round). Look in the logs of the routers that ran it, around the times of those "+
		"attempts, for why they stopped; fix that (or make the request smaller), then retry the job with "+
		"POST /v1/jobs/%s/retry", deaths, attemptsWord(seqs), RouterDeathLimit, jobID)
}
