package config

import (
	"fmt"
	"maps"
	"slices"
)

// ResolvedTarget is a route target with its provider looked up and its model
// filled in.
type ResolvedTarget struct {
	// ID names the target wherever a target is counted or shown: breakers,
	// conformance results, statistics, attempts' `provider`, the dashboard. It is
	// the provider's name when the target uses the provider's own model, else
	// "provider/model" — stable as long as the configuration says the same.
	ID       string
	Provider *Provider
	Model    string // "" only for a scripted provider without a model
	Price    *Price // the target's own price, if it has one (see PriceOrDefault)
}

// PriceOrDefault is the target's price, else its provider's, else nil.
func (t ResolvedTarget) PriceOrDefault() *Price {
	if t.Price != nil {
		return t.Price
	}
	return t.Provider.Price
}

// TargetID is the id of provider p serving model ("" is p's own model).
func TargetID(p *Provider, model string) string {
	if model == "" || model == p.Model {
		return p.Name
	}
	return p.Name + "/" + model
}

// Provider returns the provider named name, or nil.
func (c *Config) Provider(name string) *Provider {
	for i := range c.Providers {
		if c.Providers[i].Name == name {
			return &c.Providers[i]
		}
	}
	return nil
}

// RouteTargets resolves a route's targets, primary first; unknown providers
// are left out (Validate reports them).
func (c *Config) RouteTargets(r *Route) []ResolvedTarget {
	var out []ResolvedTarget
	for _, t := range r.Targets {
		p := c.Provider(t.Provider)
		if p == nil {
			continue
		}
		m := t.Model
		if m == "" {
			m = p.Model
		}
		out = append(out, ResolvedTarget{ID: TargetID(p, t.Model), Provider: p, Model: m, Price: t.Price})
	}
	return out
}

// AllTargets is every target the configuration can call: each provider's own
// model (when it has one, or is scripted), then the routes' other targets, in
// route name order, each once.
//
// A route target's own price is the target's, wherever it is listed first:
// the provider's own model listed with a price in a route is priced so, not
// at the provider's price (targetPriceProblems refuses two routes pricing one
// target differently).
func (c *Config) AllTargets() []ResolvedTarget {
	var out []ResolvedTarget
	seen := map[string]int{} // target id → its index in out
	for i := range c.Providers {
		p := &c.Providers[i]
		if p.Model == "" && p.Type != "scripted" {
			continue
		}
		seen[p.Name] = len(out)
		out = append(out, ResolvedTarget{ID: p.Name, Provider: p, Model: p.Model})
	}
	for _, n := range c.routeNames() {
		if c.Routes[n] == nil {
			continue
		}
		for _, t := range c.RouteTargets(c.Routes[n]) {
			i, ok := seen[t.ID]
			switch {
			case !ok:
				seen[t.ID] = len(out)
				out = append(out, t)
			case out[i].Price == nil:
				out[i].Price = t.Price
			}
		}
	}
	return out
}

// targetPriceProblems refuses one target priced differently in two routes:
// a price belongs to the target (provider and model: its attempts, breaker
// and statistics are one), so the routes' prices cannot both hold.
func (c *Config) targetPriceProblems() []string {
	type priced struct {
		route string
		price Price
	}
	first := map[string]priced{}
	var out []string
	for _, n := range c.routeNames() {
		if c.Routes[n] == nil {
			continue
		}
		for _, t := range c.RouteTargets(c.Routes[n]) {
			if t.Price == nil {
				continue
			}
			if f, ok := first[t.ID]; !ok {
				first[t.ID] = priced{n, *t.Price}
			} else if f.price != *t.Price {
				out = append(out, fmt.Sprintf("routes.%s: target %s has price %v/%v per million tokens, but routes.%s gives it %v/%v: a price belongs to the target (provider and model), not to a route; set it once, on one route's target or on the provider",
					n, t.ID, t.Price.InputPerMTok, t.Price.OutputPerMTok, f.route, f.price.InputPerMTok, f.price.OutputPerMTok))
			}
		}
	}
	return out
}

// routeNames is the routes' names, sorted.
func (c *Config) routeNames() []string {
	return slices.Sorted(maps.Keys(c.Routes))
}
