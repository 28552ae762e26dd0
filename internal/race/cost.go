package race

import (
	"strings"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// priceFor is the price of an attempt on target id t with model: the
// target's own when model is the target's; else (a chat request's model name
// from a route's models, passed through in place of the target's model) the
// price of the configured target of the same provider serving that model;
// else none. The target's own price is another model's: charging it would be
// wrong, by an order of magnitude between a model and its mini version.
func (r *Runner) priceFor(id string, t *Target, model string) *providers.Price {
	if model == t.Model {
		return t.Price
	}
	provider, _, _ := strings.Cut(id, "/")
	for _, cand := range []string{provider + "/" + model, provider} {
		if c, ok := r.cfg.Targets[cand]; ok && c.Model == model {
			return c.Price
		}
	}
	return nil
}

// storePrice is a target's configured price as stored on the attempts this
// process makes on it (their cost_usd follows from it); nil: unpriced.
func storePrice(p *providers.Price) *store.Price {
	if p == nil {
		return nil
	}
	return &store.Price{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok}
}
