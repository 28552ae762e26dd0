package ops

import (
	"context"
	"fmt"
	"slices"

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
	AllowModel(ctx context.Context, provider, model string, p *prompt.Prompt, role string) (ok bool, reason string)
}

var _ GateJudge = (*conformance.Gate)(nil)

// GateRoute is a configured route as the conformance gate sees it.
type GateRoute struct {
	Name string
	// Targets are the route's target ids in order: the first is its primary,
	// every other a failover or hedge target (race.RoleOf).
	Targets []string
	// ConformancePrompt is the prompt whose results gate the route's chat
	// completions ("" for none).
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
	// the prompt's route being this one) or "chat" (the route's chat
	// completions naming no model of the route's `models`, gated by its
	// conformance_prompt; a chat completion naming one is judged for that
	// model: see GET /v1/conformance).
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
// for each prompt of the route (the prompts whose route it is, as their jobs
// ask for their model; and its conformance_prompt, as a chat completion
// naming no model asks for the target's), by provider. status is why no
// entry could be made ("" when the gate was asked).
func gateEntries(ctx context.Context, ops Config, prompts *prompt.Set) (byProvider map[string][]GateEntry, status string) {
	if ops.Gate == nil {
		return nil, "not available: the conformance gate is not given to the operator views"
	}
	if ops.Gate.Mode() == conformance.GateOff {
		return nil, "off: conformance.gate is off; no target is gated"
	}
	byProvider = map[string][]GateEntry{}
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
			for _, p := range prompts.OfRoute(r.Name, r.ConformancePrompt) {
				if p.Route == r.Name {
					// A prompt job asks for the prompt's model, else the
					// target's: the gate's own choice for "".
					byProvider[target] = append(byProvider[target], gateEntry(ctx, ops.Gate, ops.TargetModels, r.Name, target, role, "prompt", "", p))
				}
				if p.Name == r.ConformancePrompt {
					model := ""
					if ops.TargetModels != nil {
						model = ops.TargetModels(target) // a chat completion naming no model sends the target's
					}
					byProvider[target] = append(byProvider[target], gateEntry(ctx, ops.Gate, ops.TargetModels, r.Name, target, role, "chat", model, p))
				}
			}
		}
	}
	return byProvider, ""
}

// gateEntry asks gate about target in role on route for p's jobs asking for
// model.
// modelOf is Config.TargetModels, to name the model the gate chose for "".
func gateEntry(ctx context.Context, gate GateJudge, modelOf func(string) string, route, target, role, jobs, model string, p *prompt.Prompt) GateEntry {
	ok, why := gate.AllowModel(ctx, target, model, p, role)
	e := GateEntry{Route: route, Role: role, Prompt: p.Name, PromptVersion: p.Version, Jobs: jobs, Model: model, Admitted: ok}
	if e.Model == "" {
		e.Model = p.Model // else the target's, which modelOf says
		if e.Model == "" && modelOf != nil {
			e.Model = modelOf(target)
		}
	}
	if !ok {
		e.Reason = why
		e.Command = fmt.Sprintf("router conformance run --provider %s --prompt %s", target, p.Name)
	}
	return e
}
