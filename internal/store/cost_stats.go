package store

import (
	"context"
	"time"
)

// HedgeCost is what hedging cost over a recent window and the latency it
// bought (all replicas).
type HedgeCost struct {
	TotalUSD float64 `json:"total_usd"` // every priced attempt
	LostUSD  float64 `json:"lost_usd"`  // attempts that did not win (hedges, retries, failovers)
	HedgeUSD float64 `json:"hedge_usd"` // hedge attempts, won or not
	// HedgeWins is the number of jobs a hedge won; LatencyBoughtMS is, over
	// them, the mean time by which the winning hedge beat the attempt it
	// hedged: the job's latest primary, retry or failover before it by seq
	// (that attempt's end minus the hedge's; one cancelled when the hedge won
	// counts 0, so this is a lower bound). Not the job's first primary: after
	// a retry or failover that one had ended before the hedge began, and every
	// such win counted 0.
	HedgeWins       int64   `json:"hedge_wins"`
	LatencyBoughtMS float64 `json:"latency_bought_ms"`
	// UnpricedAttempts is the number of attempts with usage but no cost
	// (their target had no price): the sums above leave them out, so they
	// are the priced attempts' alone whenever it is above 0 — as a job's
	// cost_usd, which is then left out (Job.sumCosts), is not.
	UnpricedAttempts int64 `json:"unpriced_attempts"`
}

// recentHedgeCostSQL reads the cost of the attempts created within a window
// ($1), reached by created_at (attempts_created), and counts those with usage
// that have no cost (unpricedUsage's condition, in SQL).
const recentHedgeCostSQL = `
		WITH recent AS (SELECT a.job_id, a.seq, a.role, a.state, a.finished_at, a.cost_usd, a.usage FROM attempts a WHERE a.created_at > now() - $1::interval),
		won AS (
			SELECT w.job_id, w.finished_at AS won_at,
				(SELECT p.finished_at FROM attempts p WHERE p.job_id = w.job_id AND p.seq < w.seq AND p.role <> 'hedge' ORDER BY p.seq DESC LIMIT 1) AS primary_end
			FROM recent w WHERE w.role = 'hedge' AND w.state = 'won')
		SELECT coalesce((SELECT sum(cost_usd) FROM recent), 0)::float8,
			coalesce((SELECT sum(cost_usd) FROM recent WHERE state <> 'won'), 0)::float8,
			coalesce((SELECT sum(cost_usd) FROM recent WHERE role = 'hedge'), 0)::float8,
			(SELECT count(*) FROM won),
			coalesce((SELECT avg(greatest(extract(epoch FROM coalesce(primary_end, won_at) - won_at), 0)) * 1000 FROM won), 0)::float8,
			(SELECT count(*) FROM recent WHERE cost_usd IS NULL AND jsonb_typeof(usage) = 'object'
				AND (coalesce((usage ->> 'prompt_tokens')::numeric, 0) > 0 OR coalesce((usage ->> 'completion_tokens')::numeric, 0) > 0))`

// RecentHedgeCost reads HedgeCost over attempts created within window, on the
// database clock.
func (s *Store) RecentHedgeCost(ctx context.Context, window time.Duration) (*HedgeCost, error) {
	var h HedgeCost
	err := s.pool.QueryRow(ctx, recentHedgeCostSQL,
		window).Scan(&h.TotalUSD, &h.LostUSD, &h.HedgeUSD, &h.HedgeWins, &h.LatencyBoughtMS, &h.UnpricedAttempts)
	if err != nil {
		return nil, err
	}
	return &h, nil
}
