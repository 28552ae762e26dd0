package config

import "fmt"

// Settings the file may write that would be accepted and then change nothing:
// an operator who sets them believes something is limited or configured
// that is not. Each is refused at load, naming the setting and what to do,
// as script on a provider that is not scripted is.

// burstProblems refuses a limits.burst (top level or an owner's) that no
// request rate goes with: the token bucket exists only for a rate above 0,
// so without one (left out, or 0: unlimited) the burst limits nothing. A
// burst of 0 (the default: the rate rounded up) says nothing and passes. The
// top-level burst is inherited: it takes effect for an owner whose
// api_keys[].limits sets a rate and no burst of its own, so it passes when
// one does.
func (c Config) burstProblems() []string {
	var out []string
	rateOf := func(l Limits) float64 {
		if l.RequestsPerSecond == nil {
			return 0
		}
		return *l.RequestsPerSecond
	}
	if b := c.Limits.Burst; b != nil && *b > 0 && rateOf(c.Limits) == 0 {
		inherited := false
		for _, k := range c.APIKeys {
			if k.Limits != nil && k.Limits.Burst == nil && rateOf(c.Limits.Over(k.Limits)) > 0 {
				inherited = true
			}
		}
		if !inherited {
			out = append(out, fmt.Sprintf("limits.burst (%d) needs limits.requests_per_second: without a rate (%s) no request is limited, so the burst limits nothing; "+
				"set limits.requests_per_second (requests per second per owner; burst is how many may come at once), or remove burst",
				*b, rateWhy(c.Limits.RequestsPerSecond, "limits")))
		}
	}
	for i, k := range c.APIKeys {
		if k.Limits == nil || k.Limits.Burst == nil || *k.Limits.Burst <= 0 {
			continue
		}
		if rateOf(c.Limits.Over(k.Limits)) != 0 {
			continue // a rate, or one out of range (refused on its own)
		}
		where := fmt.Sprintf("api_keys[%d].limits", i)
		why, set := "left out here and in the top-level limits", where+" (or in the top-level limits)"
		if k.Limits.RequestsPerSecond != nil {
			why, set = rateWhy(k.Limits.RequestsPerSecond, where), where
		} else if c.Limits.RequestsPerSecond != nil {
			why = rateWhy(c.Limits.RequestsPerSecond, "the top-level limits")
		}
		out = append(out, fmt.Sprintf("%s.burst (%d) needs a requests_per_second: owner %s has no rate (%s), so no request is limited and the burst limits nothing; "+
			"set requests_per_second in %s, or remove burst", where, *k.Limits.Burst, k.Owner, why, set))
	}
	return out
}

// rateWhy says why a requests_per_second written at where (or left out) is
// no rate.
func rateWhy(rps *float64, where string) string {
	if rps == nil {
		return "requests_per_second is left out"
	}
	return "requests_per_second is 0, unlimited, in " + where
}

// providerSettingProblems refuses the settings of a provider that its type
// ignores: stream on a scripted provider (it answers the same either way) and
// max_tokens on any but an anthropic one (only the Anthropic adapter sends
// it, for requests that set none, as Anthropic requires one).
func (p Provider) providerSettingProblems(where string) []string {
	var out []string
	if p.Type == "scripted" && p.Stream != nil && *p.Stream {
		out = append(out, fmt.Sprintf("%s.stream: a scripted provider answers with its script's whole output whether streamed or not, so stream has no effect on type scripted; "+
			"remove stream (a broken stream is played by the request directive `#scripted: cut`, `stall` or `malformed`)", where))
	}
	if p.MaxTokens > 0 && (p.Type == "openai" || p.Type == "scripted") {
		how := "an openai provider sends the caller's max_tokens as given, per request (the prompt's max_tokens, or the chat completion's), and none when the request sets none"
		if p.Type == "scripted" {
			how = "a scripted provider answers with its script's output whatever max_tokens is"
		}
		out = append(out, fmt.Sprintf("%s.max_tokens (%d) applies to type anthropic only (it is sent to Anthropic when a request sets none, as Anthropic requires one); %s; remove max_tokens",
			where, p.MaxTokens, how))
	}
	return out
}

// hedgeNoEffectProblems refuses the hedge settings of route name that it
// wrote and that can change nothing: hedge_after (a duration or adaptive) on a
// route of one target — a hedge goes only to a target the job has not used,
// so it never starts; hedge_min or hedge_max, which bound the adaptive delay
// only, unless the route hedges adaptively; and hedge_budget, which bounds the
// calls a job has in flight beside its first, on a route that never hedges
// (without a hedge a job has one call in flight at a time) — off, one target,
// max_inflight 1 or max_attempts 1 (whose written hedge_after is refused on its
// own, hedgeProblems). What the file
// left out — hedge_after off on a route of one target, the default bounds and
// budget — is never refused; a bound written 0 or below is refused as such
// (hedgeBoundProblems). An unreadable hedge_after is refused on its own.
func (r *Route) hedgeNoEffectProblems(name string) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	fixed, adaptive := r.HedgeDelay()
	if !adaptive && fixed <= 0 && r.HedgeAfter != "off" {
		return nil // not a duration, adaptive or off: refused in problems
	}
	one := len(r.Targets) == 1
	if one && !r.hedgeDefault && (fixed > 0 || adaptive) {
		add("routes.%s.hedge_after (%s) has no effect: the route has one target (%s), and a hedge goes only to another target, so it would never start; add a target to hedge to, or remove hedge_after (left out, it is off on a route of one target)",
			name, r.HedgeAfter, r.Targets[0].label())
	}
	// why no adaptive hedge is ever waited for, and what would change that
	var why, fix string
	switch {
	case one && r.hedgeDefault:
		why, fix = "hedge_after is off (left out on a route of one target, a hedge having no other target to go to)", "add a target to hedge to"
	case one && r.HedgeAfter == "off":
		why, fix = "hedge_after is off (no hedging; a route of one target never hedges anyway)", "add a target to hedge to"
	case one:
		why, fix = fmt.Sprintf("the route never hedges, having one target (%s)", r.Targets[0].label()), "add a target to hedge to"
	case r.HedgeAfter == "off":
		why, fix = "hedge_after is off (no hedging)", "set hedge_after: adaptive"
	case r.MaxInflight == 1:
		why, fix = "max_inflight is 1 (a hedge is a second call in flight: the route never hedges)", "raise max_inflight"
	case r.MaxAttempts == 1:
		why, fix = "max_attempts is 1 (a hedge is a second attempt: the route never hedges)", "raise max_attempts"
	case fixed > 0:
		why, fix = "hedge_after is a fixed "+fixed.String(), "set hedge_after: adaptive"
	default:
		return errs // adaptive hedges: every setting may apply
	}
	for _, b := range []struct {
		field   string
		v       Duration
		written bool
	}{{"hedge_min", r.HedgeMin, !r.hedgeMinDefault}, {"hedge_max", r.HedgeMax, !r.hedgeMaxDefault}} {
		if b.written && b.v > 0 {
			add("routes.%s.%s (%s) has no effect: it bounds the adaptive hedge delay, and %s; remove %s, or %s",
				name, b.field, b.v.D(), why, b.field, fix)
		}
	}
	if fixed > 0 && !one && r.MaxInflight != 1 && r.MaxAttempts != 1 {
		return errs // a fixed hedge uses the budget
	}
	if !r.hedgeBudgetDefault {
		if fix == "set hedge_after: adaptive" {
			fix = "set hedge_after (adaptive or a duration)"
		}
		add("routes.%s.hedge_budget has no effect: it bounds the calls a job has in flight beside its first, and %s, so a job never has more than one; remove hedge_budget, or %s",
			name, why, fix)
	}
	return errs
}

// label names target t in a message as its target id does (TargetID):
// provider, or provider/model when the target names a model.
func (t Target) label() string {
	if t.Model == "" {
		return t.Provider
	}
	return t.Provider + "/" + t.Model
}
