package config

import "slices"

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
func (c *Config) AllTargets() []ResolvedTarget {
	var out []ResolvedTarget
	seen := map[string]bool{}
	for i := range c.Providers {
		p := &c.Providers[i]
		if p.Model == "" && p.Type != "scripted" {
			continue
		}
		seen[p.Name] = true
		out = append(out, ResolvedTarget{ID: p.Name, Provider: p, Model: p.Model})
	}
	names := make([]string, 0, len(c.Routes))
	for n := range c.Routes {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if c.Routes[n] == nil {
			continue
		}
		for _, t := range c.RouteTargets(c.Routes[n]) {
			if !seen[t.ID] {
				seen[t.ID] = true
				out = append(out, t)
			}
		}
	}
	return out
}
