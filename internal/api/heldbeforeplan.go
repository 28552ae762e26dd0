package api

import (
	"context"

	"github.com/routerhq/router/internal/store"
)

// halfOpenRoutes is the optional capability of an Executor (the race's
// Runner) that says, from memory, whether a target of route has a half-open
// circuit breaker.
type halfOpenRoutes interface {
	HalfOpen(route string) bool
}

// heldBeforePlan looks nj's Idempotency-Key up before the job's race is
// planned, but only when a target of its route has a half-open breaker.
// Planning takes that target's breaker admission —
// then its only probe, or one of a few — before CreateJob says whether the
// key is new; a replay would hold the probe for CreateJob's round trip (a
// new job arriving meanwhile refused, the real probe delayed) and hand it
// back unused. held: the key has a job, to replay without planning
// (CreateJob with no first attempt finds it). Otherwise, the usual case, no
// round trip is spent: a new job's creation stays one. A key made up for an
// unkeyed request is never looked up.
func (s *Server) heldBeforePlan(ctx context.Context, nj *store.NewJob) (held bool, err error) {
	if nj.Unkeyed || nj.IdempotencyKey == "" {
		return false, nil
	}
	if v, ok := s.Exec.(halfOpenRoutes); !ok || !v.HalfOpen(nj.Route) {
		return false, nil
	}
	return s.Store.KeyHeld(ctx, nj.Owner, nj.Operation, nj.IdempotencyKey)
}
