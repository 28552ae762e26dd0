package conformance

import (
	"slices"
	"strings"

	"github.com/routerhq/router/internal/providers"
)

// transientKinds are the provider errors that say "not now": the provider
// could not take the request just then, and nothing of whether the target
// conforms — rate limited (429), unavailable or overloaded (503, 529), and a
// connection refused or reset before any answer. Nothing else is transient,
// whatever the taxonomy would retry: a timeout (before any byte, a request or
// gateway timeout, mid-stream), a stalled stream and any other server error
// (500, 502…) are what a production job would meet on this target the same
// way, so they are real failures, recorded, and withdraw a pass. So is a
// provider error that says the request is wrong (bad request, content policy,
// context length), that the target is misconfigured (auth, quota, model not
// found), or that the answer was broken (a malformed or cut stream, an empty
// answer).
var transientKinds = []providers.Kind{
	providers.KindRateLimited, providers.KindUnavailable, providers.KindConnRefused, providers.KindConnReset,
}

// transientError reports whether a case that failed its round trip with pe
// failed for a transient reason (transientKinds), by the taxonomy's Kind,
// never by the error's text. A caller's or router's fault never is, except
// a host name that does not resolve (providers.CodeHostNotFound): the live
// race fails it over at once as misconfigured, but container platforms give
// that same answer while a service restarts (Docker's DNS for a stopped
// container, a Kubernetes headless service with no ready pod), and a model
// server restarting during the run must not lose its pass until the next
// one. A host truly retired keeps its pass until max_age; its failures open
// its circuit breaker meanwhile.
func transientError(pe *providers.Error) bool {
	if pe != nil && pe.Code == providers.CodeHostNotFound {
		return true
	}
	if pe == nil || pe.Fault == providers.FaultCaller || pe.Fault == providers.FaultRouter {
		return false
	}
	return slices.Contains(transientKinds, pe.Kind)
}

// failures says how the cases that ran failed: real counts the cases that
// failed for a reason of the target's (any stage but a transient provider
// error), transient those that failed only on a transient provider error.
func failures(cases []CaseResult) (real, transient int) {
	for _, c := range cases {
		switch {
		case c.Passed:
		case c.Transient:
			transient++
		default:
			real++
		}
	}
	return real, transient
}

// inconclusive reports whether a finished pair's cases prove nothing either
// way: none failed for a reason of the target's, and some failed on a
// transient provider error (the cases that passed do not make it a pass: the
// others were not tested).
func inconclusive(cases []CaseResult) bool {
	real, transient := failures(cases)
	return real == 0 && transient > 0
}

// rerunInconclusive is the command that reruns the report's inconclusive
// results ("" when there are none).
func (r *Report) rerunInconclusive() string {
	var provs, prompts []string
	for _, res := range r.Results {
		if res.Inconclusive {
			if !slices.Contains(provs, res.Provider) {
				provs = append(provs, res.Provider)
			}
			if !slices.Contains(prompts, res.Prompt) {
				prompts = append(prompts, res.Prompt)
			}
		}
	}
	if len(provs) == 0 {
		return ""
	}
	return "router conformance run --provider " + strings.Join(provs, ",") + " --prompt " + strings.Join(prompts, ",")
}

// inconclusiveMeans is what n inconclusive results mean, with the command that
// reruns them.
func (r *Report) inconclusiveMeans() string {
	return "only transient provider errors (rate limits, unavailable or overloaded, a refused or reset connection); not recorded, " +
		"so the gate still judges those providers by their previous runs: rerun `" + r.rerunInconclusive() + "` once the provider recovers"
}
