package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// BreakerState is one replica's view of one provider's circuit breaker.
type BreakerState struct {
	Replica  string `json:"replica"`
	Provider string `json:"provider"`
	State    string `json:"state"` // closed, half-open, open
	// Counts since the breaker's last state change (gobreaker's Counts).
	Requests             int64 `json:"requests"`
	Successes            int64 `json:"successes"`
	Failures             int64 `json:"failures"`
	Exclusions           int64 `json:"exclusions"`
	ConsecutiveSuccesses int64 `json:"consecutive_successes"`
	ConsecutiveFailures  int64 `json:"consecutive_failures"`
	// SinceChange is how long ago the state last changed, as the publishing
	// process measured it; the database turns it into ChangedAt on its own clock.
	SinceChange time.Duration `json:"-"`
	// Changed: the breaker changed state since this replica last published
	// it, perhaps back to the state the row holds (open -> half-open -> open
	// between two publications, or a publication that failed). changed_at is
	// then set from SinceChange even when the state is the same; without it a
	// same-state publication keeps the row's changed_at.
	Changed bool `json:"-"`
	// ChangedAt and UpdatedAt are on the database clock (read only).
	ChangedAt time.Time `json:"changed_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Age is now() - updated_at on the database clock (read only).
	Age time.Duration `json:"-"`
}

// UpsertBreakerStates records replica's breaker states, one row per provider,
// stamped with the database clock.
func (s *Store) UpsertBreakerStates(ctx context.Context, replica string, states []BreakerState) error {
	if len(states) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, st := range states {
		b.Queue(`INSERT INTO breaker_states AS b (replica, provider, state, requests, successes, failures, exclusions,
				consecutive_successes, consecutive_failures, changed_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() - make_interval(secs => $10), now())
			ON CONFLICT (replica, provider) DO UPDATE SET state = EXCLUDED.state, requests = EXCLUDED.requests,
				successes = EXCLUDED.successes, failures = EXCLUDED.failures, exclusions = EXCLUDED.exclusions,
				consecutive_successes = EXCLUDED.consecutive_successes, consecutive_failures = EXCLUDED.consecutive_failures,
				-- keep the first recorded time of an unchanged state: repeated publications
				-- must not drift it by the publisher's rounding; a new change to the same
				-- state ($11: a re-open) is a new time
				changed_at = CASE WHEN b.state = EXCLUDED.state AND NOT $11 THEN b.changed_at ELSE EXCLUDED.changed_at END,
				updated_at = now()`,
			replica, st.Provider, st.State, st.Requests, st.Successes, st.Failures, st.Exclusions,
			st.ConsecutiveSuccesses, st.ConsecutiveFailures, max(st.SinceChange, 0).Seconds(), st.Changed)
	}
	return s.pool.SendBatch(ctx, b).Close()
}

// ListBreakerStates returns every replica's breaker states updated within
// maxAge on the database clock (older rows belong to replicas that stopped or
// died), ordered by provider then replica.
func (s *Store) ListBreakerStates(ctx context.Context, maxAge time.Duration) ([]BreakerState, error) {
	rows, err := s.pool.Query(ctx, `SELECT replica, provider, state, requests, successes, failures, exclusions,
			consecutive_successes, consecutive_failures, changed_at, updated_at,
			extract(epoch FROM now() - updated_at)::float8
		FROM breaker_states WHERE updated_at > now() - $1::interval
		ORDER BY provider, replica`, maxAge)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (BreakerState, error) {
		var b BreakerState
		var age float64
		err := r.Scan(&b.Replica, &b.Provider, &b.State, &b.Requests, &b.Successes, &b.Failures, &b.Exclusions,
			&b.ConsecutiveSuccesses, &b.ConsecutiveFailures, &b.ChangedAt, &b.UpdatedAt, &age)
		b.Age = time.Duration(age * float64(time.Second))
		return b, err
	})
	if out == nil {
		out = []BreakerState{}
	}
	return out, err
}

// DeleteBreakerStates removes a replica's rows (on orderly shutdown).
func (s *Store) DeleteBreakerStates(ctx context.Context, replica string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM breaker_states WHERE replica = $1`, replica)
	return err
}

// PruneBreakerStates deletes rows not updated for olderThan (dead replicas) and
// says how many.
func (s *Store) PruneBreakerStates(ctx context.Context, olderThan time.Duration) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM breaker_states WHERE updated_at < now() - $1::interval`, olderThan)
	return tag.RowsAffected(), err
}

// BreakerKey is the key of an attempt's stored error that says how its
// provider's circuit breaker counted it, where its state does not say it.
// BreakerIgnored: the breaker did not count the attempt, which says nothing of
// the provider (an answer that broke only the caller's own response_format, an
// attempt cut by the job's deadline after its provider began answering or
// before it had its first-byte budget, one cut by its router's shutdown).
// ProviderStats leaves such attempts out, as the breaker does.
// BreakerFailure: the breaker counted as a failure an attempt whose stored
// state does not say so — a cancelled hedged loser still silent, no response
// byte, when the hedge it caused won, or a call that ended unknown (its own
// timeout, no answer) and was stored lost or cancelled by its job's end:
// recorded after the job had ended (unknownEndErrorSQL), or unknown until a
// sibling's win or a resolution settled it lost (settleSiblingsSQL) or the
// job's cancellation cancelled it (CancelJob): markedFailureSQL.
// ProviderStats counts it as failed, whatever its state, as the breaker does,
// and leaves it out of the latency percentiles (no answer).
const (
	BreakerKey     = "breaker"
	BreakerIgnored = "ignored"
	BreakerFailure = "failure"
)

// markedFailureSQL is the error e (a jsonb expression) of an attempt whose
// outcome is unknown as it is stored once its job's end settles it (lost,
// cancelled): with "breaker": "failure" (BreakerFailure) unless e already
// says how the breaker counted it ("breaker": "ignored": the race excused
// it, markIgnored). Its breaker counted the call's unknown end as a failure
// (race's outcomeOf), and while unknown /v1/providers' stats count it as
// failed (providerStatsSQL); the state its job's end gives it (lost,
// cancelled) would count it as a success or in neither, so the mark keeps
// it failed, and out of the latency percentiles (no answer). The one
// fragment for that mark: an unknown end recorded after its job ended
// (unknownEndErrorSQL), an unknown attempt settled lost by a sibling's win
// or a resolution (settleSiblingsSQL), one cancelled with its job
// (CancelJob).
func markedFailureSQL(e string) string {
	return `CASE WHEN coalesce(` + e + `->>'` + BreakerKey + `', '') = ''
		THEN coalesce(` + e + `, '{}'::jsonb) || jsonb_build_object('` + BreakerKey + `', '` + BreakerFailure + `')
		ELSE ` + e + ` END`
}

// unknownEndErrorSQL is the error FinishAttemptAs stores ($3, out.Error) for
// an attempt's end in state $2, on the job j. An unknown end on a job that had
// already ended is stored as the job's end settles its attempts (lost,
// cancelled: unknownUnlessEndedSQL), yet its breaker counts the call's end —
// unknown: a failure unless the race marked it ignored (race's outcomeOf,
// markIgnored) — so its error says so (markedFailureSQL), decided in the
// same update as the state it is stored in, and /v1/providers' stats
// (providerStatsSQL) count it as the breaker does.
var unknownEndErrorSQL = `CASE WHEN $2::text = 'unknown' AND ` + unknownUnlessEndedSQL + ` <> 'unknown'
	THEN ` + markedFailureSQL(`$3::jsonb`) + `
	ELSE $3::jsonb END`

// ProviderStats is what the attempts of one provider over a recent window say.
type ProviderStats struct {
	Provider string `json:"provider"`
	// Attempts that ended with a verdict on the provider, by the same rule
	// as its circuit breaker: Succeeded counts won, lost and caller-fault
	// failures (the provider answered correctly), Failed counts provider or
	// network failures, invalid output and unknown outcomes, and the
	// attempts the breaker counted as failures whatever their state (their
	// error says "breaker": "failure", BreakerFailure: hedged losers still
	// silent when cut, calls that ended unknown after their job had ended,
	// stored lost or cancelled). Other cancelled attempts, and attempts the
	// breaker did not count ("breaker": "ignored", BreakerIgnored), count in
	// neither.
	Attempts  int64 `json:"attempts"`
	Succeeded int64 `json:"succeeded"`
	Failed    int64 `json:"failed"`
	Won       int64 `json:"won"`
	Lost      int64 `json:"lost"`
	Cancelled int64 `json:"cancelled"`
	InFlight  int64 `json:"in_flight"`
	// SuccessRate is Succeeded / (Succeeded + Failed); nil without a verdict.
	SuccessRate *float64 `json:"success_rate"`
	// Latency percentiles (milliseconds, to a tenth: interpolation's float
	// noise such as 289.99999999999997 is no information) of attempts that
	// returned an answer (won, lost, invalid — not one stored so that ended
	// without an answer: "breaker": "failure", or "outcome_unknown"; nor one
	// resolved out of band, whose latency is its time to the router's
	// timeout); nil without one.
	P50MS *float64 `json:"p50_ms"`
	P95MS *float64 `json:"p95_ms"`
	P99MS *float64 `json:"p99_ms"`
}

// SentBreaker names the circuit breaker (Breaker) that counts the attempts
// on Provider (a target id) that sent Model in place of the target's own
// model: ProviderStats counts them under that name, as the breaker does.
type SentBreaker struct {
	Provider, Model, Breaker string
}

// providerStatsSQL reads the attempts created within a window ($1) by
// created_at (attempts_created, migration 0016), as the operator's other
// window queries do (TestWindowQueriesUseIndexes), each under the name of the
// breaker that counted it: its target's, or the one of the model it sent
// ($2, $3, $4: SentBreaker's provider, model and breaker). An attempt whose
// error says the breaker ignored it (BreakerKey) is neither ok nor bad; one
// whose error says the breaker counted it as a failure is bad, whatever its
// state, and no answer: it is left out of the latency percentiles, as is one
// whose error says its outcome was unknown (a timeout stored lost) and one
// resolved out of band (its error's resolution: its latency_ms is the time
// to the router's own timeout). A resolution's verdict counts as its state
// says: resolved succeeded (won) is ok, failed or invalid is bad.
const providerStatsSQL = `
		WITH sent AS (
			SELECT * FROM unnest($2::text[], $3::text[], $4::text[]) AS s(provider, model, breaker)
		), m AS (
			SELECT coalesce(sent.breaker, attempts.provider) AS provider, state, latency_ms, error,
				-- a resolution's verdict counts as its state says, whatever
				-- the race marked the call that made the attempt unknown (an
				-- excused "ignored" cut resolved failed is failed)
				CASE WHEN error->'resolution' IS NOT NULL THEN ''
					ELSE coalesce(error->>'` + BreakerKey + `', '') END AS mark
			FROM attempts LEFT JOIN sent ON sent.provider = attempts.provider AND sent.model = attempts.model
			WHERE created_at > now() - $1::interval
		), a AS (
			SELECT provider, state,
				-- no answer's latency (percentile_cont skips NULL): a call that
				-- ended without an answer, stored so; or one resolved out of
				-- band (ResolveAttempt: unknown, then won, failed or invalid
				-- by a resolution), whose latency_ms is its time to the
				-- router's giving up (its timeout), not to an answer
				CASE WHEN mark = '` + BreakerFailure + `' OR coalesce(error->>'outcome_unknown', '') = 'true'
						OR error->'resolution' IS NOT NULL
					THEN NULL ELSE latency_ms END AS latency_ms,
				-- an unknown attempt the race excused ("ignored") and the job's
				-- end then settled lost is no success: the breaker counted nothing
				(state IN ('won', 'lost') OR (state = 'failed' AND error->>'fault' = 'caller'))
					AND mark NOT IN ('` + BreakerFailure + `', '` + BreakerIgnored + `') AS ok,
				((state IN ('invalid', 'unknown') OR (state = 'failed' AND coalesce(error->>'fault', '') <> 'caller'))
					AND mark <> '` + BreakerIgnored + `')
				OR mark = '` + BreakerFailure + `' AS bad
			FROM m
		)
		SELECT provider,
			count(*) FILTER (WHERE ok OR bad),
			count(*) FILTER (WHERE ok),
			count(*) FILTER (WHERE bad),
			count(*) FILTER (WHERE state = 'won'),
			count(*) FILTER (WHERE state = 'lost'),
			count(*) FILTER (WHERE state = 'cancelled'),
			count(*) FILTER (WHERE state IN ('starting', 'running')),
			round(percentile_cont(0.50) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE state IN ('won', 'lost', 'invalid'))::numeric, 1)::float8,
			round(percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE state IN ('won', 'lost', 'invalid'))::numeric, 1)::float8,
			round(percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE state IN ('won', 'lost', 'invalid'))::numeric, 1)::float8
		FROM a GROUP BY provider`

// ProviderStats summarises each provider's attempts created within window, on
// the database clock, by breaker: an attempt that sent a model named in sent
// is counted under its breaker's name, not its target's. Providers without
// attempts are absent from the map.
func (s *Store) ProviderStats(ctx context.Context, window time.Duration, sent ...SentBreaker) (map[string]ProviderStats, error) {
	provs, models, breakers := make([]string, len(sent)), make([]string, len(sent)), make([]string, len(sent))
	for i, b := range sent {
		provs[i], models[i], breakers[i] = b.Provider, b.Model, b.Breaker
	}
	rows, err := s.pool.Query(ctx, providerStatsSQL, window, provs, models, breakers)
	if err != nil {
		return nil, err
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ProviderStats, error) {
		var p ProviderStats
		err := r.Scan(&p.Provider, &p.Attempts, &p.Succeeded, &p.Failed, &p.Won, &p.Lost, &p.Cancelled, &p.InFlight,
			&p.P50MS, &p.P95MS, &p.P99MS)
		if n := p.Succeeded + p.Failed; n > 0 {
			rate := float64(p.Succeeded) / float64(n)
			p.SuccessRate = &rate
		}
		return p, err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]ProviderStats, len(list))
	for _, p := range list {
		out[p.Provider] = p
	}
	return out, nil
}

// Counters are database-wide totals over a recent window (every replica).
type Counters struct {
	JobsByState     map[string]int64 `json:"jobs_by_state"`
	AttemptsByState map[string]int64 `json:"attempts_by_state"`
	AttemptsByRole  map[string]int64 `json:"attempts_by_role"`
	RacesLost       int64            `json:"races_lost"`
	HedgesStarted   int64            `json:"hedges_started"`
	HedgesWon       int64            `json:"hedges_won"`
}

// recentCountersSQL counts the jobs and attempts created within a window
// ($1), reached by created_at (jobs_created, attempts_created).
const recentCountersSQL = `SELECT 'job', state, count(*) FROM jobs WHERE created_at > now() - $1::interval GROUP BY state
		UNION ALL SELECT 'state', state, count(*) FROM attempts WHERE created_at > now() - $1::interval GROUP BY state
		UNION ALL SELECT 'role', role, count(*) FROM attempts WHERE created_at > now() - $1::interval GROUP BY role
		UNION ALL SELECT 'hedge_won', '', count(*) FROM attempts WHERE created_at > now() - $1::interval AND role = 'hedge' AND state = 'won'`

// RecentCounters counts jobs and attempts created within window, on the
// database clock.
func (s *Store) RecentCounters(ctx context.Context, window time.Duration) (*Counters, error) {
	c := &Counters{JobsByState: map[string]int64{}, AttemptsByState: map[string]int64{}, AttemptsByRole: map[string]int64{}}
	rows, err := s.pool.Query(ctx, recentCountersSQL, window)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var kind, key string
		var n int64
		if err := rows.Scan(&kind, &key, &n); err != nil {
			return nil, err
		}
		switch kind {
		case "job":
			c.JobsByState[key] = n
		case "state":
			c.AttemptsByState[key] = n
		case "role":
			c.AttemptsByRole[key] = n
		case "hedge_won":
			c.HedgesWon = n
		}
	}
	c.RacesLost = c.AttemptsByState[AttemptLost]
	c.HedgesStarted = c.AttemptsByRole[RoleHedge]
	return c, rows.Err()
}
