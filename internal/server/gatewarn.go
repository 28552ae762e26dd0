package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// gateReadTimeout bounds each read of warnGatedTargets.
const gateReadTimeout = 5 * time.Second

// warnGatedTargets logs, once, a warning for each route with targets the
// conformance gate keeps out of its jobs for want of a passing run: under the
// default gate (fallbacks) a new deployment's fallbacks, so that its jobs
// neither fail over nor hedge, which nothing else says until a job fails.
// The warning names the targets, the prompts and the command that admits
// them. A target counts as gated for a prompt of the route (the prompts
// whose route it is, and its conformance_prompt) when, for a model the
// gate is asked for about its jobs (modelsAsked), it has no run of the
// prompt's current version with that model that passed and is fresh,
// recorded against the prompt's content and the target's settings of now
// (the digest of that model): the gate's rule, without the cases in which a fresh pass
// is refused all the same (a failing run that overlaps it), which each
// job's routing explains. It reads the database once per gated target, and
// at most until ctx ends; a read that fails is logged and the check given
// up: it only informs.
func warnGatedTargets(ctx context.Context, cfg *config.Config, st *store.Store, prompts *prompt.Set, gate *conformance.Gate, log *slog.Logger) {
	maxAge := cfg.Conformance.MaxAge.D()
	digestOf := conformance.TargetDigests(cfg)
	runsOf := map[string][]store.ConformanceRun{} // by target id, read once each
	for _, name := range slices.Sorted(maps.Keys(cfg.Routes)) {
		r := cfg.Routes[name]
		if r == nil {
			continue
		}
		routePrompts := prompts.OfRoute(name, r.ConformancePrompt)
		resolved := cfg.RouteTargets(r)
		ids := make([]string, len(resolved))
		for i, t := range resolved {
			ids[i] = t.ID
		}
		var targets, promptNames []string
		for _, t := range resolved {
			if !gate.Applies(race.RoleOf(ids, t.ID)) || slices.Contains(targets, t.ID) {
				continue
			}
			for _, p := range routePrompts {
				runs, read := runsOf[t.ID]
				if !read {
					rctx, cancel := context.WithTimeout(ctx, gateReadTimeout)
					var err error
					runs, err = st.LatestConformanceRuns(rctx, store.ConformanceFilter{Provider: t.ID, MaxAge: maxAge})
					cancel()
					if err != nil {
						log.Warn("could not check at start which targets the conformance gate keeps out of their routes (each job's routing still says why a target was skipped)",
							"target", t.ID, "err", err)
						return
					}
					runsOf[t.ID] = runs
				}
				if allAdmitted(runs, p, modelsAsked(name, r, p, targetModel(t)), t.ID, digestOf) {
					continue
				}
				if !slices.Contains(targets, t.ID) {
					targets = append(targets, t.ID)
				}
				if !slices.Contains(promptNames, p.Name) {
					promptNames = append(promptNames, p.Name)
				}
			}
		}
		if len(targets) == 0 {
			continue
		}
		which, without := "fallbacks", "do not fail over or hedge to them"
		if gate.Mode() == conformance.GateAll {
			which, without = "targets", "are not sent to them"
		}
		log.Warn(fmt.Sprintf("route %s: %s %s are gated until `router conformance run --provider %s --prompt %s` passes on them "+
			"(conformance.gate: %s): until then its jobs %s",
			name, which, strings.Join(targets, ", "), strings.Join(targets, ","), strings.Join(promptNames, ","), gate.Mode(), without),
			"route", name, "targets", targets, "prompts", promptNames)
	}
}

// modelsAsked is the models the gate is asked for about a target of route
// name (own: the target's model) for p's jobs, as routing asks it
// (spec.modelOn): a prompt job of the route asks for p's model, else the
// target's own; a chat completion on the route whose conformance_prompt is p
// sends the target's own model when it names the route (p's, when the
// target has none: the gate's choice for ""), or the model of the route's
// `models` it names — as the operator views (internal/ops's gateEntries)
// and the runs (conformance.ChatRoute.ModelsOn) count them.
func modelsAsked(name string, r *config.Route, p *prompt.Prompt, own string) []string {
	var out []string
	add := func(m string) {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	if p.Route == name {
		add(cmp.Or(p.Model, own))
	}
	if p.Name == r.ConformancePrompt {
		add(cmp.Or(own, p.Model))
		for _, m := range r.Models {
			add(m)
		}
	}
	return out
}

// allAdmitted reports whether runs (target's latest runs) admit p's jobs
// asking for each of models (admitted).
func allAdmitted(runs []store.ConformanceRun, p *prompt.Prompt, models []string, target string, digestOf func(target, model string, ownMaxTokens bool) string) bool {
	for _, m := range models {
		if !admitted(runs, p, m, target, digestOf) {
			return false
		}
	}
	return true
}

// admitted reports whether runs (a target's latest runs, store.
// LatestConformanceRuns) hold a fresh pass of p's current version with model,
// recorded against p's content and target's settings (conformance.SameTarget,
// as the gate judges them).
func admitted(runs []store.ConformanceRun, p *prompt.Prompt, model, target string, digestOf func(target, model string, ownMaxTokens bool) string) bool {
	for _, r := range runs {
		if r.Prompt == p.Name && r.PromptVersion == p.Version && (model == "" || r.Model == model) && r.Passed && r.Fresh &&
			p.SameContent(r.PromptDigest) && conformance.SameTarget(digestOf, r.TargetDigest, target, model, p) {
			return true
		}
	}
	return false
}
