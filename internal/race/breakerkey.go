package race

// ModelBreakers is the optional part of an Admission (a circuit breaker set)
// that keeps breakers per model sent, not only per target: an attempt on a
// target that sends another model than the target's own (a chat request
// naming one of its route's `models`) is admitted and counted by the breaker
// of the target's provider × the model sent (SPEC §10, §15), so that a model
// the provider fails on opens no breaker of the model the target is
// configured with, for every tenant.
type ModelBreakers interface {
	// BreakerOf names the breaker of an attempt on target that sends model
	// in place of the target's own; "" when there is none of its own (the
	// target's breaker counts it, as it counts the target's own model).
	BreakerOf(target, model string) string
	// SentBreakers names the breakers of every model target may send in
	// place of its own.
	SentBreakers(target string) []string
}

// breakerOf names the breaker that admits and counts an attempt of sp on
// target: the target's own (its id) when the attempt sends the target's
// model, or when the Admission keeps no breaker for the model sent;
// otherwise the breaker of the model sent (ModelBreakers).
func (r *Runner) breakerOf(target string, sp *spec) string {
	mb, ok := r.cfg.Admission.(ModelBreakers)
	if !ok || sp == nil || sp.model == "" {
		return target
	}
	t := r.cfg.Targets[target]
	if t == nil || sp.model == t.Model {
		return target
	}
	if name := mb.BreakerOf(target, sp.model); name != "" {
		return name
	}
	return target
}

// breakerWhy is a breaker's refusal of target in words for the job's
// routing: a refusal by the breaker of the model sent (not the target's own)
// names it, so that the target's own breaker, shown closed, does not
// contradict it.
func breakerWhy(target, breaker, why string) string {
	if breaker == target {
		return why
	}
	return why + " (the breaker of the model sent, " + breaker + ")"
}
