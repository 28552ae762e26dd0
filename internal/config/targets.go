package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
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
	// ContextWindow is the target's window in tokens: its own, else its
	// provider's.
	ContextWindow int
	// Tokenizer is the encoding the target counts with: its own, else the
	// provider's for the provider's own model, else "" (chosen by Model's
	// name, as for a provider without a tokenizer).
	Tokenizer string

	window    *int   // the route target's own context_window
	tokenizer string // the route target's own tokenizer
}

// settle fills ContextWindow and Tokenizer from the target's own settings
// and its provider's. A provider's tokenizer is its own model's: another
// model of the provider is counted by its own name unless its target says.
func (t *ResolvedTarget) settle() {
	t.ContextWindow, t.Tokenizer = t.Provider.ContextWindow, ""
	if t.ID == t.Provider.Name {
		t.Tokenizer = t.Provider.Tokenizer
	}
	if t.window != nil {
		t.ContextWindow = *t.window
	}
	if t.tokenizer != "" {
		t.Tokenizer = t.tokenizer
	}
}

// PriceOrDefault is the target's price, else its provider's when the target
// serves the provider's own model, else nil. A provider's price is its own
// model's: another model of the provider (gpt-4o under a gpt-4o-mini
// provider) is unpriced unless its target says, never charged the
// provider's model's price (PriceWarnings names such targets).
func (t ResolvedTarget) PriceOrDefault() *Price {
	if t.Price != nil {
		return t.Price
	}
	if t.ownModel() {
		return t.Provider.Price
	}
	return nil
}

// ownModel reports whether the target serves its provider's own model (Model
// is resolved: a route target without a model has the provider's). A
// provider other than a scripted one may name no model when every target
// names one: its price then belongs to no one model, and is every target's.
func (t ResolvedTarget) ownModel() bool {
	return t.Model == t.Provider.Model || t.Provider.Model == "" && t.Provider.Type != "scripted"
}

// PriceWarnings names each target (config.AllTargets) left unpriced although
// its provider has a price: the provider's price is for another model, so
// the target's attempts have no cost until the target is given a price.
// The server logs them at start.
func (c *Config) PriceWarnings() []string {
	var out []string
	for _, t := range c.AllTargets() {
		if t.Price != nil || t.Provider.Price == nil || t.ownModel() {
			continue
		}
		own := t.Provider.Model
		if own == "" { // a scripted provider's own model is named after it
			own = "scripted-" + t.Provider.Name
		}
		out = append(out, fmt.Sprintf("target %s has no price (the provider's price is for %s): set price on the target", t.ID, own))
	}
	return out
}

// PriceMixWarnings names each route that mixes priced and unpriced targets
// (each target priced as PriceOrDefault, with the price any route gives it:
// AllTargets): a job that used an unpriced target, with usage, shows no
// cost_usd (nor lost_cost_usd when that attempt did not win) — a partial sum
// would read as if the unpriced attempts were free — and
// router_cost_usd_total counts nothing for them. Each warning names the
// unpriced targets and where to price each. A route with no priced target is
// not named: it is left unpriced on purpose (no job of it has a cost). The
// server logs them at start (Warnings).
func (c *Config) PriceMixWarnings() []string {
	prices := map[string]*Price{}
	providerIndex := map[string]int{}
	for i := range c.Providers {
		providerIndex[c.Providers[i].Name] = i
	}
	for _, t := range c.AllTargets() {
		prices[t.ID] = t.PriceOrDefault()
	}
	var out []string
	for _, name := range c.routeNames() {
		r := c.Routes[name]
		if r == nil {
			continue
		}
		var priced, unpriced, fixes []string
		seen := map[string]bool{}
		for _, t := range c.RouteTargets(r) {
			if seen[t.ID] {
				continue
			}
			seen[t.ID] = true
			if prices[t.ID] != nil {
				priced = append(priced, t.ID)
				continue
			}
			unpriced = append(unpriced, t.ID)
			if t.ownModel() {
				fixes = append(fixes, fmt.Sprintf("providers[%d].price for %s", providerIndex[t.Provider.Name], t.ID))
			} else {
				fixes = append(fixes, fmt.Sprintf("price on the route target {provider: %s, model: %s} for %s", t.Provider.Name, t.Model, t.ID))
			}
		}
		if len(priced) == 0 || len(unpriced) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("route %s mixes priced targets (%s) with targets that have no price (%s): a job with an attempt on an unpriced target "+
			"shows no cost_usd (nor lost_cost_usd when that attempt did not win), and router_cost_usd_total counts nothing for it; "+
			"set price: {input_per_mtok: …, output_per_mtok: …} (USD per million tokens; 0 is a price) — %s",
			name, strings.Join(priced, ", "), strings.Join(unpriced, ", "), strings.Join(fixes, "; ")))
	}
	return out
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
		rt := ResolvedTarget{ID: TargetID(p, t.Model), Provider: p, Model: m, Price: t.Price, window: t.ContextWindow, tokenizer: t.Tokenizer}
		rt.settle()
		out = append(out, rt)
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
		rt := ResolvedTarget{ID: p.Name, Provider: p, Model: p.Model}
		rt.settle()
		out = append(out, rt)
	}
	for _, n := range c.routeNames() {
		if c.Routes[n] == nil {
			continue
		}
		for _, t := range c.RouteTargets(c.Routes[n]) {
			i, ok := seen[t.ID]
			if !ok {
				seen[t.ID] = len(out)
				out = append(out, t)
				continue
			}
			// A route target's own settings are the target's wherever it
			// is listed (targetSettingProblems refuses two different ones).
			o := &out[i]
			if o.Price == nil {
				o.Price = t.Price
			}
			if o.window == nil {
				o.window = t.window
			}
			if o.tokenizer == "" {
				o.tokenizer = t.tokenizer
			}
			o.settle()
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

// targetSettingProblems refuses one target given two different
// context_windows or tokenizers by two routes: like a price, they belong to
// the target (provider and model), not to a route.
func (c *Config) targetSettingProblems() []string {
	type first struct{ route, value string }
	seen := map[[2]string]first{} // target id and setting → the first route setting it
	var out []string
	check := func(route, id, setting, value string) {
		k := [2]string{id, setting}
		if f, ok := seen[k]; !ok {
			seen[k] = first{route, value}
		} else if f.value != value {
			out = append(out, fmt.Sprintf("routes.%s: target %s has %s %s, but routes.%s gives it %s: it belongs to the target (provider and model), not to a route; set it once, on one route's target",
				route, id, setting, value, f.route, f.value))
		}
	}
	for _, n := range c.routeNames() {
		if c.Routes[n] == nil {
			continue
		}
		for _, t := range c.RouteTargets(c.Routes[n]) {
			if t.window != nil {
				check(n, t.ID, "context_window", strconv.Itoa(*t.window))
			}
			if t.tokenizer != "" {
				check(n, t.ID, "tokenizer", t.tokenizer)
			}
		}
	}
	return out
}

// routeNames is the routes' names, sorted.
func (c *Config) routeNames() []string {
	return slices.Sorted(maps.Keys(c.Routes))
}
