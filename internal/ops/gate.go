package ops

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
)

// GateJudge is the conformance gate as the operator views ask it;
// *conformance.Gate, the very gate the race runner asks, implements it, so
// that GET /v1/providers says what routing will decide, by the gate's own
// rules (freshness, model, prompt content, target settings, a read that
// fails refusing).
type GateJudge interface {
	Mode() string
	Applies(role string) bool
	// AllowModels answers each ask as routing's AllowModel would, starting
	// every read the asks need before it waits for any (race.BatchGate).
	AllowModels(ctx context.Context, asks []race.GateAsk) []race.GateAnswer
}

var _ GateJudge = (*conformance.Gate)(nil)

// GateRoute is a configured route as the conformance gate sees it.
type GateRoute struct {
	Name string
	// Targets are the route's target ids in order: the first is its primary,
	// every other a failover or hedge target (race.RoleOf).
	Targets []string
	// ConformancePrompt is the prompt whose results gate the route's chat
	// completions ("" for none). The models they may ask for besides the
	// target's own (the route's `models`) are Config.ChatRoutes' entry of
	// the route: give both.
	ConformancePrompt string
}

// GateEntry is the conformance gate's word on a provider as a target of one
// route, for the jobs of one prompt: under conformance.gate: fallbacks, the
// route's fallbacks (failover and hedge targets); under all, every target.
type GateEntry struct {
	Route string `json:"route"`
	// Role is the role the gate judges the target in on the route: failover
	// (which also stands for hedge) or primary (conformance.gate: all).
	Role          string `json:"role"`
	Prompt        string `json:"prompt"`
	PromptVersion string `json:"prompt_version"`
	// Jobs says which jobs the entry is about: "prompt" (the prompt's jobs,
	// the prompt's route being this one), "prompt_by_request" (the jobs of a
	// prompt whose route is another that name this one in POST /v1/jobs'
	// `route`: any configured route may be named) or "chat" (the route's chat
	// completions, gated by its conformance_prompt: one entry for those
	// naming the route itself, which send the target's own model, and one
	// for each model of the route's `models` a completion may name, which
	// is sent to the target in its place; Model says which).
	Jobs string `json:"jobs"`
	// Model is the model the attempt asks for, which results are per ("":
	// runs of any model count).
	Model string `json:"model,omitempty"`
	// Admitted: the gate lets the jobs send to the target in this role now
	// (a fresh pass counts). When false, the route's jobs do not fail over
	// or hedge to it (or, as the primary, skip it), whatever Eligible says.
	Admitted bool `json:"admitted"`
	// Reason is the gate's reason for refusing, as the job's routing records
	// it; Command is what records the pass that admits the target.
	Reason  string `json:"reason,omitempty"`
	Command string `json:"command,omitempty"`
}

// gateEntries asks ops.Gate about every target of ops.GateRoutes it judges,
// for each prompt whose jobs may run on the route (RoutePrompts: every
// prompt, as its jobs ask for its model, whether the route is the prompt's
// own or named in the job's `route`; and its conformance_prompt, for each
// model its chat completions ask for: chatModelsAsked), by provider. status is why no
// entry could be made ("" when the gate was asked). The gate is asked once,
// for all the entries (AllowModels): its reads run at once, so the view
// waits for the slowest, each bounded by the gate and ctx, not for their sum.
func gateEntries(ctx context.Context, ops Config, prompts *prompt.Set) (byProvider map[string][]GateEntry, status string) {
	if ops.Gate == nil {
		return nil, "not available: the conformance gate is not given to the operator views"
	}
	if ops.Gate.Mode() == conformance.GateOff {
		return nil, "off: conformance.gate is off; no target is gated"
	}
	var (
		entries []GateEntry
		targets []string // the provider of each entry
		asks    []race.GateAsk
	)
	ask := func(route, target, role, jobs, model string, p *prompt.Prompt) {
		entries = append(entries, gateEntry(ops.TargetModels, route, target, role, jobs, model, p))
		targets = append(targets, target)
		asks = append(asks, race.GateAsk{Provider: target, Model: model, Prompt: p, Role: role})
	}
	for _, r := range ops.GateRoutes {
		var seen []string
		for _, target := range r.Targets {
			if slices.Contains(seen, target) {
				continue
			}
			seen = append(seen, target)
			role := race.RoleOf(r.Targets, target)
			if !ops.Gate.Applies(role) {
				continue
			}
			for _, rp := range RoutePrompts(prompts, r.Name, r.ConformancePrompt) {
				// A prompt job asks for the prompt's model, else the
				// target's: the gate's own choice for "".
				ask(r.Name, target, role, rp.Jobs, "", rp.Prompt)
				if rp.Chat {
					for _, model := range chatModelsAsked(ops, r.Name, target, rp.Prompt) {
						ask(r.Name, target, role, JobsChat, model, rp.Prompt)
					}
				}
			}
		}
	}
	byProvider = map[string][]GateEntry{}
	for i, a := range ops.Gate.AllowModels(ctx, asks) {
		e := entries[i]
		e.Admitted = a.OK
		if !a.OK {
			e.Reason = a.Reason
			if !strings.HasPrefix(a.Reason, race.GateUnread) {
				// A read that failed clears by itself: no run to make.
				e.Command = fmt.Sprintf("router conformance run --provider %s --prompt %s", targets[i], e.Prompt)
			}
		}
		byProvider[targets[i]] = append(byProvider[targets[i]], e)
	}
	return byProvider, ""
}

// chatModelsAsked is the models the gate is asked for about target's chat
// completions on route, whose conformance_prompt is p, as routing asks it:
// the target's own model (Config.TargetModels; "" when not known, which the
// gate takes as its own choice), for a completion naming the route itself,
// then each model of the route's `models` (Config.ChatRoutes) a completion
// may name instead, once each (conformance.ChatRoute.ModelsOn, which the
// runs and GET /v1/conformance follow too).
func chatModelsAsked(ops Config, route, target string, p *prompt.Prompt) []string {
	own := ""
	if ops.TargetModels != nil {
		own = ops.TargetModels(target)
	}
	out := []string{own}
	first := cmp.Or(own, p.Model) // the model the gate judges "" for, as far as the view can tell
	for _, cr := range ops.ChatRoutes {
		if cr.Name != route || cr.Prompt != p.Name {
			continue
		}
		for _, m := range cr.ModelsOn(target, own) {
			if m != "" && m != first && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// gateEntry is the entry of target in role on route for p's jobs asking
// for model, before the gate's answer.
// modelOf is Config.TargetModels, to name the model the gate chose for "".
func gateEntry(modelOf func(string) string, route, target, role, jobs, model string, p *prompt.Prompt) GateEntry {
	e := GateEntry{Route: route, Role: role, Prompt: p.Name, PromptVersion: p.Version, Jobs: jobs, Model: model}
	if e.Model == "" {
		e.Model = p.Model // else the target's, which modelOf says
		if e.Model == "" && modelOf != nil {
			e.Model = modelOf(target)
		}
	}
	return e
}
