package race

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A chat request's model name (a route's models, passed through in place of
// the target's model) is priced as the configured target of the same
// provider serving that model, or not at all — never at the target's own
// model's price, which may be an order of magnitude off. Found by review.
func TestPriceForAPassedThroughModel(t *testing.T) {
	big := &providers.Price{InputPerMTok: 2.5, OutputPerMTok: 10}
	mini := &providers.Price{InputPerMTok: 0.15, OutputPerMTok: 0.6}
	r := &Runner{cfg: Config{Targets: map[string]*Target{
		"openai":             {Model: "gpt-4o", Price: big},
		"openai/gpt-4o-mini": {Model: "gpt-4o-mini", Price: mini},
		"claude":             {Model: "claude-x", Price: big},
	}}}
	for _, c := range []struct {
		id, model string
		want      *providers.Price
	}{
		{"openai", "gpt-4o", big},
		{"openai", "gpt-4o-mini", mini},
		{"openai/gpt-4o-mini", "gpt-4o", big},
		{"openai", "gpt-4.1-nano", nil},
		{"claude", "claude-y", nil},
	} {
		if got := r.priceFor(c.id, r.cfg.Targets[c.id], c.model); got != c.want {
			t.Errorf("%s with model %s: price %+v, want %+v", c.id, c.model, got, c.want)
		}
	}
}
