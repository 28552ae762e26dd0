package main

import (
	"slices"
	"strings"

	"github.com/routerhq/router/internal/config"
)

// targetIDs is the target ids --provider's names select, in the order given,
// each once. A target id stands for itself. A provider with no model of its
// own (one endpoint serving several models, each a route target p/<model>)
// has no target named after it: its name selects all its targets, as the
// help's "provider names" promises. p/<p's own model> — the id the documented
// rule (p/mini for {provider: p, model: mini}) gives the route target that
// sends p's own model — is that target, whose id is p (config.TargetID). Any
// other name is left for knownNames to refuse.
func targetIDs(cfg *config.Config, names []string) ([]string, error) {
	all := cfg.AllTargets()
	var out []string
	add := func(id string) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	for _, n := range names {
		if slices.ContainsFunc(all, func(t config.ResolvedTarget) bool { return t.ID == n }) {
			add(n)
			continue
		}
		if p := cfg.Provider(n); p != nil {
			var ids []string
			for _, t := range all {
				if t.Provider.Name == n {
					ids = append(ids, t.ID)
				}
			}
			if len(ids) == 0 {
				return nil, usagef("--provider %s: provider %s has no model of its own and no route sends to it, so it has no target to test: "+
					"give it a model (providers[].model), or list it in a route as {provider: %s, model: …}", n, n, n)
			}
			for _, id := range ids {
				add(id)
			}
			continue
		}
		if name, model, ok := strings.Cut(n, "/"); ok {
			if p := cfg.Provider(name); p != nil && p.Model != "" && model == p.Model {
				add(config.TargetID(p, model))
				continue
			}
		}
		add(n) // not configured: knownNames names it
	}
	return out, nil
}
