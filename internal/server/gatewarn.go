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
	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// gateReadTimeout bounds each read of warnGatedTargets.
const gateReadTimeout = 5 * time.Second

// The start-up warning's bounds, so that a configuration of many routes and
// prompts logs a few short lines: a route's warning names at most
// warnedPrompts prompts (beyond, it gives their number and a command
// running every prompt), and at most warnedRoutes routes are warned of one
// by one (beyond, one line gives their number).
const (
	warnedPrompts = 8
	warnedRoutes  = 20
)

// warnGatedTargets logs, once, a warning for each route with targets the
// conformance gate keeps out of its jobs for want of a passing run: under the
// default gate (fallbacks) a new deployment's fallbacks, so that its jobs
// neither fail over nor hedge, which nothing else says until a job fails.
// The warning names the targets, the prompts and the command that admits
// them. A target counts as gated for a prompt whose jobs may run on the
// route (ops.RoutePrompts: every prompt, since a job may name any route in
// `route`; the route's conformance_prompt for its chat completions too)
// when, for a model the gate is asked for about its jobs (modelsAsked), it
// has no run of the prompt's current version with that model that passed
// and is fresh, recorded against the prompt's content and the target's
// settings of now (the digest of that model): the gate's rule, without the
// cases in which a fresh pass is refused all the same (a failing run that
// overlaps it), which each job's routing explains. It reads the database
// once per gated target, and at most until ctx ends; a read that fails is
// logged and the check given up: it only informs. The lines are bounded
// (warnedPrompts, warnedRoutes).
func warnGatedTargets(ctx context.Context, cfg *config.Config, st *store.Store, prompts *prompt.Set, gate *conformance.Gate, log *slog.Logger) {
	maxAge := cfg.Conformance.MaxAge.D()
	digestOf := conformance.TargetDigests(cfg)
	runsOf := map[string][]store.ConformanceRun{} // by target id, read once each
	var unlisted []string                         // routes past warnedRoutes
	warned := 0
	for _, name := range slices.Sorted(maps.Keys(cfg.Routes)) {
		r := cfg.Routes[name]
		if r == nil {
			continue
		}
		routePrompts := ops.RoutePrompts(prompts, name, r.ConformancePrompt)
		resolved := cfg.RouteTargets(r)
		ids := make([]string, len(resolved))
		for i, t := range resolved {
			ids[i] = t.ID
		}
		var targets []string
		gatedFor := map[string]bool{}  // the gated prompts' names
		byRequest := map[string]bool{} // those reaching the route only when a job names it
		for _, t := range resolved {
			if !gate.Applies(race.RoleOf(ids, t.ID)) || slices.Contains(targets, t.ID) {
				continue
			}
			for _, rp := range routePrompts {
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
				if allAdmitted(runs, rp.Prompt, modelsAsked(r, rp, targetModel(t)), t.ID, digestOf) {
					continue
				}
				if !slices.Contains(targets, t.ID) {
					targets = append(targets, t.ID)
				}
				gatedFor[rp.Prompt.Name] = true
				if rp.Jobs == ops.JobsPromptByRequest && !rp.Chat {
					byRequest[rp.Prompt.Name] = true
				}
			}
		}
		if len(targets) == 0 {
			continue
		}
		if warned == warnedRoutes {
			unlisted = append(unlisted, name)
			continue
		}
		warned++
		warnRoute(log, name, gate.Mode(), targets, slices.Sorted(maps.Keys(gatedFor)), slices.Sorted(maps.Keys(byRequest)))
	}
	if len(unlisted) > 0 {
		log.Warn(fmt.Sprintf("%d more routes have targets the conformance gate keeps out (not warned of one by one, to keep the log short): "+
			"GET /v1/providers lists each under `gate`, and `router conformance run` with no --provider or --prompt runs every target on every prompt",
			len(unlisted)), "routes", capNames(unlisted), "routes_total", len(unlisted))
	}
}

// warnRoute logs the warning of route name, whose targets the gate in mode
// keeps out of the jobs of promptNames (byRequest among them: prompts whose
// own route is another, whose jobs run on this one only when they name it).
func warnRoute(log *slog.Logger, name, mode string, targets, promptNames, byRequest []string) {
	which, without := "fallbacks", "do not fail over or hedge to them"
	if mode == conformance.GateAll {
		which, without = "targets", "are not sent to them"
	}
	command, forPrompts := fmt.Sprintf("router conformance run --provider %s --prompt %s", strings.Join(targets, ","), strings.Join(promptNames, ",")), ""
	if len(promptNames) > warnedPrompts {
		command = "router conformance run --provider " + strings.Join(targets, ",") // every prompt
		forPrompts = fmt.Sprintf(" for %d prompts (%s)", len(promptNames), fewNames(promptNames))
	}
	msg := fmt.Sprintf("route %s: %s %s are gated%s until `%s` passes on them (conformance.gate: %s): until then its jobs %s",
		name, which, strings.Join(targets, ", "), forPrompts, command, mode, without)
	attrs := []any{"route", name, "targets", targets, "prompts", capNames(promptNames)}
	switch {
	case len(byRequest) == len(promptNames):
		msg += fmt.Sprintf(" (route %s is no gated prompt's own: its jobs of them are those that name it in `route`)", name)
		attrs = append(attrs, "by_request", capNames(byRequest))
	case len(byRequest) > 0:
		msg += fmt.Sprintf(" (%s reach route %s only from jobs that name it in `route`: their own route is another)", fewNames(byRequest), name)
		attrs = append(attrs, "by_request", capNames(byRequest))
	}
	if len(promptNames) > warnedPrompts {
		attrs = append(attrs, "prompts_total", len(promptNames))
	}
	log.Warn(msg, attrs...)
}

// capNames is names, cut to its first warnedPrompts.
func capNames(names []string) []string {
	return names[:min(len(names), warnedPrompts)]
}

// fewNames says names, at most warnedPrompts of them, the rest counted.
func fewNames(names []string) string {
	if len(names) <= warnedPrompts {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(capNames(names), ", "), len(names)-warnedPrompts)
}

// modelsAsked is the models the gate is asked for about a target of route r
// (own: the target's model) for rp's jobs, as routing asks it
// (spec.modelOn): a prompt job on the route (whichever way it reached it)
// asks for p's model, else the target's own; a chat completion on the route
// whose conformance_prompt is p sends the target's own model when it names
// the route (p's, when the target has none: the gate's choice for ""), or
// the model of the route's `models` it names — as the operator views
// (internal/ops's gateEntries) and the runs (conformance.ChatRoute.ModelsOn)
// count them.
func modelsAsked(r *config.Route, rp ops.RoutePrompt, own string) []string {
	p := rp.Prompt
	var out []string
	add := func(m string) {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	add(cmp.Or(p.Model, own))
	if rp.Chat {
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
