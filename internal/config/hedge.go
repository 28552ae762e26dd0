package config

import (
	"fmt"
)

// hedgeProblems refuses the hedges of route name that can never start,
// beyond the primary's first-byte deadline (checked in problems): a fixed
// hedge_after at or past the route's deadline (the job is stopped first), an
// adaptive one whose hedge_max — the delay before a target has history — is
// at or past it, and a hedge_after written on a route with max_inflight 1 (a
// hedge is a second attempt in flight, which such a route never starts), with
// max_attempts 1 (a hedge is a second attempt), or with a hedge budget of
// none (percent 0 and min_concurrent 0).
func (r *Route) hedgeProblems(name string) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	fixed, adaptive := r.HedgeDelay()
	if r.Deadline > 0 && fixed > 0 && Duration(fixed) >= r.Deadline {
		add("routes.%s.hedge_after (%s) is not below the route's deadline (%s): the job is stopped first, so the hedge would never start; set hedge_after below it (or adaptive)",
			name, fixed, r.Deadline.D())
	}
	if r.Deadline > 0 && adaptive && r.MaxInflight != 1 && r.HedgeMax >= r.Deadline {
		add("routes.%s.hedge_max (%s) is not below the route's deadline (%s): an adaptive hedge waits hedge_max before a target has history, and the job is stopped first, so the hedge would never start; set hedge_max below it (or leave it out: it is then 10s, at most ¾ of deadline)",
			name, r.HedgeMax.D(), r.Deadline.D())
	}
	if r.MaxInflight == 1 && !r.hedgeDefault && (fixed > 0 || adaptive) {
		add("routes.%s.hedge_after is %s, but max_inflight is 1: a hedge is a second attempt in flight, so it would never start; max_inflight must be at least 2 for a hedge (or set hedge_after: off)",
			name, r.HedgeAfter)
	}
	if r.MaxAttempts == 1 && !r.hedgeDefault && (fixed > 0 || adaptive) {
		add("routes.%s.hedge_after is %s, but max_attempts is 1: a hedge is a second attempt, so it would never start; max_attempts must be at least 2 for a hedge (or set hedge_after: off)",
			name, r.HedgeAfter)
	}
	if b := r.HedgeBudget; !r.hedgeDefault && (fixed > 0 || adaptive) && b.Percent != nil && *b.Percent == 0 && b.MinConcurrent != nil && *b.MinConcurrent == 0 {
		add("routes.%s.hedge_after is %s, but hedge_budget allows no hedge in flight (percent 0, min_concurrent 0), so it would never start; raise the budget (defaults: percent 10, min_concurrent 3) or set hedge_after: off",
			name, r.HedgeAfter)
	}
	return errs
}

// hedgeBoundProblems refuses the adaptive bounds of route name unless
// 0 < hedge_min ≤ hedge_max, blaming what the file wrote: left out, hedge_min
// is never above hedge_max (WithDefaults), and a default is never zero or
// below, so a bound that is either was written.
func (r *Route) hedgeBoundProblems(name string) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if r.HedgeMin <= 0 {
		add("routes.%s.hedge_min (%s) must be a positive duration (omit it for the default, 2s, at most hedge_max)", name, r.HedgeMin.D())
	}
	if r.HedgeMax <= 0 {
		add("routes.%s.hedge_max (%s) must be a positive duration (omit it for the default, 10s, at most ¾ of the route's deadline)", name, r.HedgeMax.D())
	}
	switch {
	case r.HedgeMin <= 0 || r.HedgeMax <= 0 || r.HedgeMin <= r.HedgeMax:
	case r.hedgeMaxDefault:
		add("routes.%s: hedge_min (%s) must be at most hedge_max (%s; left out, hedge_max is 10s, at most ¾ of the route's deadline %s): lower hedge_min or set hedge_max",
			name, r.HedgeMin.D(), r.HedgeMax.D(), r.Deadline.D())
	default:
		add("routes.%s: hedge_min (%s) must be at most hedge_max (%s): lower hedge_min or raise hedge_max", name, r.HedgeMin.D(), r.HedgeMax.D())
	}
	return errs
}

// firstByteLimit is how long primary p may stay silent before its attempt
// becomes unknown, which blocks every new attempt — so no hedge starts after
// it — and which deadline that is: first_byte_timeout, or the timeout of a
// scripted provider (the only deadline it keeps).
func firstByteLimit(p *Provider) (Duration, string) {
	if p.Type == "scripted" {
		return p.Timeout, "timeout"
	}
	return p.FirstByteTimeout, "first_byte_timeout"
}

// hedgeMinDeadlineProblems refuses a written hedge_min of an adaptive hedge on
// route name at or past the first-byte deadline of its primary p, as a fixed
// hedge_after there is refused (problems): an adaptive delay that reaches the
// deadline is three quarters of it instead (the race's adaptiveDelay), so the
// bound never applies. A hedge_min left out is never refused: its default
// (2s, at most hedge_max) may pass a short first_byte_timeout, and the delay
// then simply stays below it.
func (r *Route) hedgeMinDeadlineProblems(name string, p *Provider) []string {
	_, adaptive := r.HedgeDelay()
	if !adaptive || len(r.Targets) < 2 || r.hedgeMinDefault || r.HedgeMin <= 0 {
		return nil // one target: hedgeNoEffectProblems says so
	}
	limit, which := firstByteLimit(p)
	if limit <= 0 || r.HedgeMin < limit {
		return nil
	}
	return []string{fmt.Sprintf("routes.%s.hedge_min (%s) is not below the primary's %s (%s, provider %s): an adaptive delay at or past it is three quarters of that deadline instead (a primary still silent then becomes unknown, which blocks every new attempt), so hedge_min would never apply; set hedge_min below it, or leave it out",
		name, r.HedgeMin.D(), which, limit.D(), p.Name)}
}
