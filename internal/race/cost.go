package race

import (
	"strings"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// priceFor is the price of an attempt on target id t with model: that of
// the target it is judged as (targetFor) — the target's own when model is
// the target's; else (a chat request's model name from a route's models,
// passed through in place of the target's model) the price of the
// configured target of the same provider serving that model; else none. The
// target's own price is another model's: charging it would be wrong, by an
// order of magnitude between a model and its mini version.
func (r *Runner) priceFor(id string, t *Target, model string) *providers.Price {
	return targetFor(r.cfg.Targets, id, t, model).Price
}

// targetFor is the target an attempt on target id t asking for model is
// judged, counted and priced as: t itself when model is t's (or none); else
// — a model passed through in place of t's (a chat request's from a route's
// models, a prompt's) — the configured target of t's provider serving that
// model (targets, by id: "provider/model", or the provider's own), with its
// context window, tokenizer, price and default max_tokens; else a target of
// that model that sets nothing of its own, as config resolves a route target
// {provider, model} that sets none: the provider's context window
// (ProviderWindow), the tokenizer chosen by the model's name, the provider's
// price only when the provider names no model of its own (ProviderPrice; t's
// are its own model's). t's window and tokenizer would be another model's:
// a request for gpt-3.5-turbo (16k) through a target serving gpt-4o (128k)
// was judged to fit, and sent for a certain context_length_exceeded.
func targetFor(targets map[string]*Target, id string, t *Target, model string) *Target {
	if model == "" || model == t.Model {
		return t
	}
	provider := providerOf(id, t)
	for _, cand := range []string{provider + "/" + model, provider} {
		if c, ok := targets[cand]; ok && c.Model == model {
			return c
		}
	}
	bare := *t
	bare.Model, bare.Encoding, bare.Price = model, "", t.ProviderPrice
	if t.ProviderWindow > 0 {
		bare.ContextWindow = t.ProviderWindow
	}
	return &bare
}

// TargetFor is targetFor, for whatever must count a request as routing
// counts it without a Runner: `router conformance run` counts each case sent
// with a model other than its target's own (a chat route's alias, a prompt's
// model) as that model's target (conformance's runCase), so that a run and
// routing agree on the window and tokenizer.
func TargetFor(targets map[string]*Target, id string, t *Target, model string) *Target {
	return targetFor(targets, id, t, model)
}

// targetFor is the package's targetFor over the runner's targets.
func (r *Runner) targetFor(id string, t *Target, model string) *Target {
	return targetFor(r.cfg.Targets, id, t, model)
}

// providerOf is the configured name of target id's provider: its adapter's
// name. It is not cut from the id: a provider's name may itself contain "/"
// (provider azure/eu, whose targets are azure/eu and azure/eu/gpt-4o-mini).
// Only a target built without an adapter (by hand, in a unit test) is taken
// to be of the provider its id names up to its first "/".
func providerOf(id string, t *Target) string {
	if t.Provider != nil {
		return t.Provider.Name()
	}
	provider, _, _ := strings.Cut(id, "/")
	return provider
}

// storePrice is a target's configured price as stored on the attempts this
// process makes on it (their cost_usd follows from it); nil: unpriced.
func storePrice(p *providers.Price) *store.Price {
	if p == nil {
		return nil
	}
	return &store.Price{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok}
}
